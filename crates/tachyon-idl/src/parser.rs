//! IDL 4 definitions from tokens, by recursive descent: modules, structs (with a base),
//! unions, enums, bitmasks, typedefs, constants and annotations (`@annotation` declarations
//! are skipped). What the data types of DDS do not use — interfaces, value types, `native`,
//! `fixed`, `any` — is refused with an error naming it.

use crate::ast::*;
use crate::error::{IdlError, Pos, Result};
use crate::lexer::{Tok, Token};

/// Deepest nesting of modules, types and expressions.
const MAX_DEPTH: usize = 128;

pub struct Parser {
    toks: Vec<Token>,
    i: usize,
    /// Half of a `>>` already consumed as a `>`.
    split_shift: bool,
    depth: usize,
}

impl Parser {
    pub fn new(mut toks: Vec<Token>, end: Pos) -> Parser {
        toks.push(Token {
            tok: Tok::Eof,
            pos: end,
        });
        Parser {
            toks,
            i: 0,
            split_shift: false,
            depth: 0,
        }
    }

    /// Every definition to the end of the input.
    pub fn specification(&mut self) -> Result<Vec<Def>> {
        let mut defs = Vec::new();
        while self.peek() != &Tok::Eof {
            if let Some(d) = self.definition()? {
                defs.push(d);
            }
        }
        Ok(defs)
    }

    fn tok(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    fn peek(&self) -> &Tok {
        &self.tok().tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        self.tok().pos.clone()
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == w)
    }

    fn error<T>(&self, what: &str) -> Result<T> {
        Err(IdlError::at(
            &self.pos(),
            format!("expected {what}, found {}", self.peek().describe()),
        ))
    }

    fn expect_punct(&mut self, p: &str) -> Result<()> {
        if p == ">" && self.is_punct(">>") {
            // `sequence<sequence<long>>`: the first `>` of a `>>`.
            if self.split_shift {
                self.split_shift = false;
                self.next();
            } else {
                self.split_shift = true;
            }
            return Ok(());
        }
        if self.is_punct(p) {
            self.next();
            Ok(())
        } else {
            self.error(&format!("`{p}`"))
        }
    }

    fn expect_word(&mut self, w: &str) -> Result<()> {
        if self.is_word(w) {
            self.next();
            Ok(())
        } else {
            self.error(&format!("`{w}`"))
        }
    }

    fn ident(&mut self) -> Result<String> {
        match self.peek().clone() {
            Tok::Ident(s) if !is_keyword(&s) => {
                self.next();
                // IDL escapes identifiers that clash with keywords with a leading `_`.
                Ok(s.strip_prefix('_').map(str::to_owned).unwrap_or(s))
            }
            _ => self.error("a name"),
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(IdlError::at(&self.pos(), "definitions nest too deeply"));
        }
        Ok(())
    }

    fn annotations(&mut self) -> Result<Vec<Annotation>> {
        let mut out = Vec::new();
        while self.is_punct("@") {
            if matches!(self.peek_at(1), Tok::Ident(s) if s == "annotation") {
                return Ok(out);
            }
            let pos = self.pos();
            self.next();
            // Annotation names may be keywords (`@default`): any word, possibly scoped.
            if self.is_punct("::") {
                self.next();
            }
            let mut name = match self.next() {
                Tok::Ident(w) => w,
                _ => return Err(IdlError::at(&pos, "expected an annotation name after `@`")),
            };
            while self.is_punct("::") {
                self.next();
                name = match self.next() {
                    Tok::Ident(w) => w,
                    _ => return Err(IdlError::at(&pos, "expected an annotation name after `::`")),
                };
            }
            let mut params = Vec::new();
            if self.is_punct("(") {
                self.next();
                if !self.is_punct(")") {
                    loop {
                        let named = matches!(self.peek(), Tok::Ident(_))
                            && matches!(self.peek_at(1), Tok::Punct("="));
                        if named {
                            let k = self.ident()?;
                            self.expect_punct("=")?;
                            params.push((Some(k), self.expr()?));
                        } else {
                            params.push((None, self.expr()?));
                        }
                        if self.is_punct(",") {
                            self.next();
                            continue;
                        }
                        break;
                    }
                }
                self.expect_punct(")")?;
            }
            out.push(Annotation { name, params, pos });
        }
        Ok(out)
    }

    /// One definition (`None` for what is skipped: an `@annotation` declaration, a stray
    /// `;`).
    fn definition(&mut self) -> Result<Option<Def>> {
        self.enter()?;
        let d = self.definition_inner();
        self.depth -= 1;
        d
    }

    fn definition_inner(&mut self) -> Result<Option<Def>> {
        if self.is_punct(";") {
            self.next();
            return Ok(None);
        }
        let annotations = self.annotations()?;
        if self.is_punct("@") {
            // `@annotation name { … };`: a declaration of an annotation; skipped.
            self.next();
            self.next();
            self.skip_braced()?;
            self.expect_punct(";")?;
            return Ok(None);
        }
        let pos = self.pos();
        let Tok::Ident(word) = self.peek().clone() else {
            return self.error("a definition");
        };
        let def = match word.as_str() {
            "module" => {
                self.next();
                let name = self.ident()?;
                self.expect_punct("{")?;
                let mut defs = Vec::new();
                while !self.is_punct("}") {
                    if self.peek() == &Tok::Eof {
                        return self.error("`}` closing module");
                    }
                    if let Some(d) = self.definition()? {
                        defs.push(d);
                    }
                }
                self.next();
                Def::Module { name, defs, pos }
            }
            "struct" | "union" => {
                self.next();
                let pos = self.pos();
                let name = self.ident()?;
                if self.is_punct(";") {
                    Def::Forward { name, pos }
                } else if word == "struct" {
                    Def::Struct(self.struct_body(name, annotations, pos)?)
                } else {
                    Def::Union(self.union_body(name, annotations, pos)?)
                }
            }
            "enum" => {
                self.next();
                let pos = self.pos();
                let name = self.ident()?;
                let enumerators = self.enumerators()?;
                Def::Enum(EnumDef {
                    name,
                    annotations,
                    enumerators,
                    pos,
                })
            }
            "bitmask" => {
                self.next();
                let pos = self.pos();
                let name = self.ident()?;
                let flags = self.enumerators()?;
                Def::Bitmask(BitmaskDef {
                    name,
                    annotations,
                    flags,
                    pos,
                })
            }
            "typedef" => {
                self.next();
                let ty = self.type_spec()?;
                let declarators = self.declarators()?;
                Def::Typedef(TypedefDef {
                    annotations,
                    ty,
                    declarators,
                })
            }
            "const" => {
                self.next();
                let ty = self.type_spec()?;
                let name = self.ident()?;
                self.expect_punct("=")?;
                let value = self.expr()?;
                Def::Const(ConstDef {
                    ty,
                    name,
                    value,
                    pos,
                })
            }
            "interface" | "valuetype" | "abstract" | "local" | "native" | "exception"
            | "component" | "home" | "eventtype" | "porttype" | "connector" | "bitset"
            | "custom" | "import" | "typeid" | "typeprefix" => {
                return Err(IdlError::at(
                    &pos,
                    format!("`{word}` definitions are not supported (DDS data types only)"),
                ))
            }
            _ => return self.error("a definition (module, struct, union, enum, typedef, const…)"),
        };
        self.expect_punct(";")?;
        Ok(Some(def))
    }

    /// Skips a `{ … }` block, nested braces included.
    fn skip_braced(&mut self) -> Result<()> {
        self.expect_punct("{")?;
        let mut depth = 1;
        while depth > 0 {
            match self.next() {
                Tok::Punct("{") => depth += 1,
                Tok::Punct("}") => depth -= 1,
                Tok::Eof => return self.error("`}`"),
                _ => {}
            }
        }
        Ok(())
    }

    fn struct_body(
        &mut self,
        name: String,
        annotations: Vec<Annotation>,
        pos: Pos,
    ) -> Result<StructDef> {
        let base = if self.is_punct(":") {
            self.next();
            let p = self.pos();
            Some((self.scoped_name()?, p))
        } else {
            None
        };
        self.expect_punct("{")?;
        let mut members = Vec::new();
        while !self.is_punct("}") {
            if self.peek() == &Tok::Eof {
                return self.error("`}` closing the struct");
            }
            let annotations = self.annotations()?;
            let ty = self.type_spec()?;
            for declarator in self.declarators()? {
                members.push(Member {
                    annotations: annotations.clone(),
                    ty: ty.clone(),
                    declarator,
                });
            }
            self.expect_punct(";")?;
        }
        self.next();
        Ok(StructDef {
            name,
            annotations,
            base,
            members,
            pos,
        })
    }

    fn union_body(
        &mut self,
        name: String,
        annotations: Vec<Annotation>,
        pos: Pos,
    ) -> Result<UnionDef> {
        self.expect_word("switch")?;
        self.expect_punct("(")?;
        let discriminator_annotations = self.annotations()?;
        let discriminator = self.type_spec()?;
        self.expect_punct(")")?;
        self.expect_punct("{")?;
        let mut cases = Vec::new();
        while !self.is_punct("}") {
            let mut labels = Vec::new();
            loop {
                if self.is_word("case") {
                    self.next();
                    labels.push(Some(self.expr()?));
                    self.expect_punct(":")?;
                } else if self.is_word("default") {
                    self.next();
                    labels.push(None);
                    self.expect_punct(":")?;
                } else {
                    break;
                }
            }
            if labels.is_empty() {
                return self.error("`case` or `default`");
            }
            let annotations = self.annotations()?;
            let ty = self.type_spec()?;
            let declarator = self.declarator()?;
            self.expect_punct(";")?;
            cases.push(Case {
                labels,
                annotations,
                ty,
                declarator,
            });
        }
        self.next();
        if cases.is_empty() {
            return Err(IdlError::at(&pos, "a union needs at least one case"));
        }
        Ok(UnionDef {
            name,
            annotations,
            discriminator,
            discriminator_annotations,
            cases,
            pos,
        })
    }

    fn enumerators(&mut self) -> Result<Vec<Enumerator>> {
        self.expect_punct("{")?;
        let mut out = Vec::new();
        while !self.is_punct("}") {
            let annotations = self.annotations()?;
            let pos = self.pos();
            let name = self.ident()?;
            out.push(Enumerator {
                name,
                annotations,
                pos,
            });
            if self.is_punct(",") {
                self.next();
            } else if !self.is_punct("}") {
                return self.error("`,` or `}`");
            }
        }
        self.next();
        if out.is_empty() {
            return self.error("at least one enumerator");
        }
        Ok(out)
    }

    fn declarators(&mut self) -> Result<Vec<Declarator>> {
        let mut out = vec![self.declarator()?];
        while self.is_punct(",") {
            self.next();
            out.push(self.declarator()?);
        }
        Ok(out)
    }

    fn declarator(&mut self) -> Result<Declarator> {
        let pos = self.pos();
        let name = self.ident()?;
        let mut dims = Vec::new();
        while self.is_punct("[") {
            self.next();
            dims.push(self.expr()?);
            self.expect_punct("]")?;
        }
        Ok(Declarator { name, dims, pos })
    }

    fn scoped_name(&mut self) -> Result<ScopedName> {
        let absolute = self.is_punct("::");
        if absolute {
            self.next();
        }
        let mut parts = vec![self.ident()?];
        while self.is_punct("::") {
            self.next();
            parts.push(self.ident()?);
        }
        Ok(ScopedName { absolute, parts })
    }

    fn type_spec(&mut self) -> Result<TypeSpec> {
        self.enter()?;
        let t = self.type_spec_inner();
        self.depth -= 1;
        t
    }

    fn type_spec_inner(&mut self) -> Result<TypeSpec> {
        let pos = self.pos();
        let word = match self.peek() {
            Tok::Ident(w) => w.clone(),
            Tok::Punct("::") => {
                let n = self.scoped_name()?;
                return Ok(TypeSpec::Named(n, pos));
            }
            _ => return self.error("a type"),
        };
        let base = |b| Ok(TypeSpec::Base(b));
        if let Some(b) = one_word_base(&word) {
            self.next();
            return base(b);
        }
        match word.as_str() {
            "unsigned" => {
                self.next();
                if self.is_word("short") {
                    self.next();
                    base(Base::UShort)
                } else if self.is_word("long") {
                    self.next();
                    if self.is_word("long") {
                        self.next();
                        base(Base::ULongLong)
                    } else {
                        base(Base::ULong)
                    }
                } else {
                    self.error("`short` or `long` after `unsigned`")
                }
            }
            "long" => {
                self.next();
                if self.is_word("long") {
                    self.next();
                    base(Base::LongLong)
                } else if self.is_word("double") {
                    self.next();
                    base(Base::LongDouble)
                } else {
                    base(Base::Long)
                }
            }
            "string" | "wstring" => {
                self.next();
                let bound = if self.is_punct("<") {
                    self.next();
                    let b = self.expr()?;
                    self.expect_punct(">")?;
                    Some(b)
                } else {
                    None
                };
                Ok(TypeSpec::String {
                    wide: word == "wstring",
                    bound,
                })
            }
            "sequence" => {
                self.next();
                self.expect_punct("<")?;
                let element = Box::new(self.type_spec()?);
                let bound = if self.is_punct(",") {
                    self.next();
                    Some(self.expr()?)
                } else {
                    None
                };
                self.expect_punct(">")?;
                Ok(TypeSpec::Sequence { element, bound })
            }
            "map" => {
                self.next();
                self.expect_punct("<")?;
                let key = Box::new(self.type_spec()?);
                self.expect_punct(",")?;
                let value = Box::new(self.type_spec()?);
                let bound = if self.is_punct(",") {
                    self.next();
                    Some(self.expr()?)
                } else {
                    None
                };
                self.expect_punct(">")?;
                Ok(TypeSpec::Map { key, value, bound })
            }
            "fixed" | "any" | "Object" | "ValueBase" => Err(IdlError::at(
                &pos,
                format!("the type `{word}` is not supported (no DDS vendor serializes it)"),
            )),
            "struct" | "union" | "enum" => Err(IdlError::at(
                &pos,
                format!("an anonymous `{word}` in a declaration: declare it on its own and use its name"),
            )),
            _ => {
                let n = self.scoped_name()?;
                Ok(TypeSpec::Named(n, pos))
            }
        }
    }

    /// A constant expression (IDL's `|`, `^`, `&`, shifts, `+ -`, `* / %`, unary `- + ~`).
    pub fn expr(&mut self) -> Result<Expr> {
        self.enter()?;
        let e = self.binary(0);
        self.depth -= 1;
        e
    }

    fn binary(&mut self, level: usize) -> Result<Expr> {
        const LEVELS: [&[&str]; 6] = [
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Tok::Punct(p) if LEVELS[level].contains(p) => *p,
                _ => return Ok(left),
            };
            self.next();
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr> {
        if let Tok::Punct(p @ ("-" | "+" | "~")) = self.peek().clone() {
            self.next();
            self.enter()?;
            let e = self.unary();
            self.depth -= 1;
            return Ok(Expr::Unary(p, Box::new(e?)));
        }
        let t = self.peek().clone();
        match t {
            Tok::Int(n) => {
                self.next();
                Ok(Expr::Int(n))
            }
            Tok::Float(f) => {
                self.next();
                Ok(Expr::Float(f))
            }
            Tok::Char(c) => {
                self.next();
                Ok(Expr::Char(c))
            }
            Tok::Str(mut s) => {
                self.next();
                // Adjacent literals are one string.
                while let Tok::Str(more) = self.peek().clone() {
                    self.next();
                    s.push_str(&more);
                }
                Ok(Expr::Str(s))
            }
            Tok::Punct("(") => {
                self.next();
                let e = self.expr()?;
                self.expect_punct(")")?;
                Ok(e)
            }
            Tok::Ident(w) if w == "TRUE" || w == "FALSE" => {
                self.next();
                Ok(Expr::Bool(w == "TRUE"))
            }
            Tok::Ident(_) | Tok::Punct("::") => Ok(Expr::Name(self.scoped_name()?)),
            _ => self.error("a constant expression"),
        }
    }
}

/// The base types named by one word.
fn one_word_base(word: &str) -> Option<Base> {
    Some(match word {
        "short" | "int16" => Base::Short,
        "uint16" => Base::UShort,
        "int32" => Base::Long,
        "uint32" => Base::ULong,
        "int64" => Base::LongLong,
        "uint64" => Base::ULongLong,
        "int8" => Base::Int8,
        "uint8" => Base::UInt8,
        "float" => Base::Float,
        "double" => Base::Double,
        "char" => Base::Char,
        "wchar" => Base::WChar,
        "boolean" => Base::Boolean,
        "octet" => Base::Octet,
        _ => return None,
    })
}

/// IDL's keywords (not usable as names unless escaped with `_`).
fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "module"
            | "struct"
            | "union"
            | "enum"
            | "bitmask"
            | "bitset"
            | "typedef"
            | "const"
            | "switch"
            | "case"
            | "default"
            | "sequence"
            | "string"
            | "wstring"
            | "map"
            | "unsigned"
            | "short"
            | "long"
            | "float"
            | "double"
            | "char"
            | "wchar"
            | "boolean"
            | "octet"
            | "TRUE"
            | "FALSE"
            | "interface"
            | "native"
            | "fixed"
            | "any"
    )
}
