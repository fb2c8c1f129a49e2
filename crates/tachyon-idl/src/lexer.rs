//! Tokens of an IDL translation unit, with the preprocessor applied on the way: `#include`
//! (each file once), `#define` of object-like macros (expanded in the text), `#undef`,
//! `#ifdef`/`#ifndef`/`#if`/`#elif`/`#else`/`#endif` (`#if` takes integers, `defined`, `!`,
//! `&&`, `||`, comparisons and parentheses), `#pragma` (ignored) and `#error`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::error::{IdlError, Pos, Result};

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(u128),
    Float(f64),
    Str(String),
    Char(char),
    Punct(&'static str),
    Eof,
}

impl Tok {
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(n) => format!("`{n}`"),
            Tok::Float(f) => format!("`{f}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Char(c) => format!("'{c}'"),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "the end of the input".to_owned(),
        }
    }
}

/// A token and where it starts.
#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

const PUNCTS: [&str; 24] = [
    "::", "<<", ">>", "{", "}", "(", ")", "[", "]", "<", ">", ";", ":", ",", "=", "+", "-", "*",
    "/", "%", "&", "|", "^", "~",
];

/// Deepest `#include` nesting.
const MAX_INCLUDE_DEPTH: usize = 64;

/// The preprocessor's state across the files of one translation unit.
pub struct Lexer {
    include_dirs: Vec<PathBuf>,
    macros: HashMap<String, String>,
    included: HashSet<PathBuf>,
    /// The files read, in order.
    read: Vec<PathBuf>,
    pub tokens: Vec<Token>,
}

impl Lexer {
    pub fn new(include_dirs: Vec<PathBuf>, defines: &[(String, String)]) -> Lexer {
        Lexer {
            include_dirs,
            macros: defines.iter().cloned().collect(),
            included: HashSet::new(),
            read: Vec::new(),
            tokens: Vec::new(),
        }
    }

    /// Lexes `path` (and what it includes) onto `self.tokens`.
    pub fn file(&mut self, path: &Path, from: Option<&Pos>, depth: usize) -> Result<()> {
        let here = Pos {
            file: path.to_owned(),
            line: 1,
            col: 1,
        };
        if depth > MAX_INCLUDE_DEPTH {
            return Err(IdlError::at(
                from.unwrap_or(&here),
                "#include nests too deeply",
            ));
        }
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        if !self.included.insert(canonical) {
            return Ok(());
        }
        self.read.push(path.to_owned());
        let text = std::fs::read_to_string(path).map_err(|e| {
            IdlError::at(
                from.unwrap_or(&here),
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        self.text(&text, path, depth)
    }

    /// The files read, in order.
    pub fn files(&self) -> Vec<PathBuf> {
        self.read.clone()
    }

    /// Lexes `text`, read from `path`.
    pub fn text(&mut self, text: &str, path: &Path, depth: usize) -> Result<()> {
        let mut s = Scanner {
            chars: text.chars().collect(),
            i: 0,
            line: 1,
            col: 1,
            file: path.to_owned(),
        };
        // The #if stack: (this branch is taken, some branch of the group was taken, the
        // enclosing region is active).
        let mut conds: Vec<(bool, bool, bool)> = Vec::new();
        let active = |conds: &[(bool, bool, bool)]| conds.last().map_or(true, |c| c.0 && c.2);
        loop {
            s.skip_space_and_comments()?;
            if s.at_end() {
                break;
            }
            let pos = s.pos();
            if s.peek() == Some('#') && s.line_start() {
                let line = s.directive_line();
                self.directive(&line, &pos, path, depth, &mut conds)?;
                continue;
            }
            if !active(&conds) {
                s.skip_line_rest();
                continue;
            }
            let tok = s.token()?;
            match &tok {
                Tok::Ident(name) if self.macros.contains_key(name) => {
                    self.expand(name, &pos, 0)?;
                }
                _ => self.tokens.push(Token { tok, pos }),
            }
        }
        if let Some(_c) = conds.last() {
            return Err(IdlError::at(&s.pos(), "#if without #endif"));
        }
        Ok(())
    }

    /// Pushes the tokens of macro `name`'s value.
    fn expand(&mut self, name: &str, pos: &Pos, depth: usize) -> Result<()> {
        if depth > 16 {
            return Err(IdlError::at(
                pos,
                format!("macro {name} expands without end"),
            ));
        }
        let value = self.macros.get(name).cloned().unwrap_or_default();
        let mut s = Scanner {
            chars: value.chars().collect(),
            i: 0,
            line: pos.line,
            col: pos.col,
            file: pos.file.clone(),
        };
        loop {
            s.skip_space_and_comments()?;
            if s.at_end() {
                return Ok(());
            }
            let tok = s.token().map_err(|e| IdlError::at(pos, e.message))?;
            match &tok {
                Tok::Ident(n) if n != name && self.macros.contains_key(n) => {
                    let n = n.clone();
                    self.expand(&n, pos, depth + 1)?;
                }
                _ => self.tokens.push(Token {
                    tok,
                    pos: pos.clone(),
                }),
            }
        }
    }

    fn directive(
        &mut self,
        line: &str,
        pos: &Pos,
        path: &Path,
        depth: usize,
        conds: &mut Vec<(bool, bool, bool)>,
    ) -> Result<()> {
        let body = line.trim_start_matches('#').trim();
        let (name, rest) = match body.find(|c: char| c.is_whitespace()) {
            Some(i) => (&body[..i], body[i..].trim()),
            None => (body, ""),
        };
        let enclosing = conds.last().map_or(true, |c| c.0 && c.2);
        match name {
            "ifdef" | "ifndef" => {
                let defined = self.macros.contains_key(first_word(rest));
                let take = defined == (name == "ifdef");
                conds.push((take, take, enclosing));
            }
            "if" => {
                let take = enclosing && self.condition(rest, pos)?;
                conds.push((take, take, enclosing));
            }
            "elif" => {
                let Some(c) = conds.last_mut() else {
                    return Err(IdlError::at(pos, "#elif without #if"));
                };
                let (_, taken, outer) = *c;
                let take = !taken && outer && self.condition(rest, pos)?;
                *c = (take, taken || take, outer);
            }
            "else" => {
                let Some(c) = conds.last_mut() else {
                    return Err(IdlError::at(pos, "#else without #if"));
                };
                *c = (!c.1, true, c.2);
            }
            "endif" => {
                if conds.pop().is_none() {
                    return Err(IdlError::at(pos, "#endif without #if"));
                }
            }
            _ if !enclosing => {}
            "define" => {
                let word = first_word(rest);
                if word.is_empty() {
                    return Err(IdlError::at(pos, "#define needs a name"));
                }
                let value = rest[word.len()..].to_owned();
                if value.starts_with('(') {
                    return Err(IdlError::at(
                        pos,
                        format!("#define {word}(…): function-like macros are not supported"),
                    ));
                }
                self.macros.insert(word.to_owned(), value.trim().to_owned());
            }
            "undef" => {
                self.macros.remove(first_word(rest));
            }
            "include" => {
                let target = self.find_include(rest, pos, path)?;
                self.file(&target, Some(pos), depth + 1)?;
            }
            "pragma" | "line" | "" => {}
            "error" => return Err(IdlError::at(pos, format!("#error {rest}"))),
            "warning" => {}
            other => {
                return Err(IdlError::at(
                    pos,
                    format!("unknown preprocessor directive #{other}"),
                ))
            }
        }
        Ok(())
    }

    /// The file `#include "x"` or `<x>` names: next to the including file (quotes only),
    /// then in the include directories in order.
    fn find_include(&self, spec: &str, pos: &Pos, path: &Path) -> Result<PathBuf> {
        let spec = spec.trim();
        let (name, local) =
            if let Some(n) = spec.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                (n, true)
            } else if let Some(n) = spec.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
                (n, false)
            } else {
                return Err(IdlError::at(pos, "#include needs \"file\" or <file>"));
            };
        let mut candidates = Vec::new();
        if local {
            if let Some(dir) = path.parent() {
                candidates.push(dir.join(name));
            }
        }
        candidates.extend(self.include_dirs.iter().map(|d| d.join(name)));
        candidates
            .iter()
            .find(|c| c.is_file())
            .cloned()
            .ok_or_else(|| {
                let dirs: Vec<_> = candidates
                    .iter()
                    .filter_map(|c| c.parent())
                    .map(|d| d.display().to_string())
                    .collect();
                IdlError::at(
                    pos,
                    format!(
                        "#include {spec}: not found in {} (add a directory with -I)",
                        if dirs.is_empty() {
                            "any include directory".to_owned()
                        } else {
                            dirs.join(", ")
                        }
                    ),
                )
            })
    }

    /// Evaluates an `#if` expression.
    fn condition(&self, expr: &str, pos: &Pos) -> Result<bool> {
        let mut s = Scanner {
            chars: expr.chars().collect(),
            i: 0,
            line: pos.line,
            col: pos.col,
            file: pos.file.clone(),
        };
        let mut toks = Vec::new();
        loop {
            s.skip_space_and_comments()?;
            if s.at_end() {
                break;
            }
            // `!`, `&&`, `||`, `==`, `!=`, `<=`, `>=` are not IDL tokens.
            let two: String = s.chars[s.i..].iter().take(2).collect();
            if ["&&", "||", "==", "!=", "<=", ">="].contains(&two.as_str()) {
                s.i += 2;
                toks.push(Tok::Ident(two));
                continue;
            }
            if s.peek() == Some('!') {
                s.i += 1;
                toks.push(Tok::Ident("!".into()));
                continue;
            }
            toks.push(s.token()?);
        }
        let mut c = CondEval {
            toks,
            i: 0,
            macros: &self.macros,
        };
        let v = c.or().ok_or_else(|| {
            IdlError::at(
                pos,
                format!("#if {expr}: an expression this preprocessor does not evaluate"),
            )
        })?;
        if c.i != c.toks.len() {
            return Err(IdlError::at(
                pos,
                format!("#if {expr}: unexpected text after the condition"),
            ));
        }
        Ok(v != 0)
    }
}

fn first_word(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// A recursive-descent evaluator of `#if` expressions.
struct CondEval<'a> {
    toks: Vec<Tok>,
    i: usize,
    macros: &'a HashMap<String, String>,
}

impl CondEval<'_> {
    fn peek_is(&self, p: &str) -> bool {
        matches!(self.toks.get(self.i), Some(Tok::Ident(s)) if s == p)
            || matches!(self.toks.get(self.i), Some(Tok::Punct(s)) if *s == p)
    }

    fn or(&mut self) -> Option<i128> {
        let mut v = self.and()?;
        while self.peek_is("||") {
            self.i += 1;
            let r = self.and()?;
            v = i128::from(v != 0 || r != 0);
        }
        Some(v)
    }

    fn and(&mut self) -> Option<i128> {
        let mut v = self.cmp()?;
        while self.peek_is("&&") {
            self.i += 1;
            let r = self.cmp()?;
            v = i128::from(v != 0 && r != 0);
        }
        Some(v)
    }

    fn cmp(&mut self) -> Option<i128> {
        let v = self.unary()?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if self.peek_is(op) {
                self.i += 1;
                let r = self.unary()?;
                return Some(i128::from(match op {
                    "==" => v == r,
                    "!=" => v != r,
                    "<=" => v <= r,
                    ">=" => v >= r,
                    "<" => v < r,
                    _ => v > r,
                }));
            }
        }
        Some(v)
    }

    fn unary(&mut self) -> Option<i128> {
        if self.peek_is("!") {
            self.i += 1;
            return Some(i128::from(self.unary()? == 0));
        }
        let t = self.toks.get(self.i)?.clone();
        self.i += 1;
        match t {
            Tok::Int(n) => i128::try_from(n).ok(),
            Tok::Punct("(") => {
                let v = self.or()?;
                self.peek_is(")").then(|| self.i += 1)?;
                Some(v)
            }
            Tok::Ident(s) if s == "defined" => {
                let paren = self.peek_is("(");
                if paren {
                    self.i += 1;
                }
                let Some(Tok::Ident(name)) = self.toks.get(self.i).cloned() else {
                    return None;
                };
                self.i += 1;
                if paren {
                    self.peek_is(")").then(|| self.i += 1)?;
                }
                Some(i128::from(self.macros.contains_key(&name)))
            }
            // A macro's value if it is a number, else 0 (as C's preprocessor).
            Tok::Ident(s) => Some(
                self.macros
                    .get(&s)
                    .and_then(|v| v.trim().parse::<i128>().ok())
                    .unwrap_or(0),
            ),
            _ => None,
        }
    }
}

/// Characters of one file, read left to right.
struct Scanner {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    file: PathBuf,
}

impl Scanner {
    fn at_end(&self) -> bool {
        self.i >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn pos(&self) -> Pos {
        Pos {
            file: self.file.clone(),
            line: self.line,
            col: self.col,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// Whether only spaces precede the current character on its line.
    fn line_start(&self) -> bool {
        self.chars[..self.i]
            .iter()
            .rev()
            .take_while(|c| **c != '\n')
            .all(|c| c.is_whitespace())
    }

    /// The directive from here to the end of its line (joined over `\` continuations,
    /// comments left out).
    fn directive_line(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '\\' && self.peek_at(1) == Some('\n') {
                self.bump();
                self.bump();
                out.push(' ');
                continue;
            }
            if c == '\n' {
                break;
            }
            if c == '/' && self.peek_at(1) == Some('/') {
                self.skip_line_rest();
                break;
            }
            if c == '/' && self.peek_at(1) == Some('*') {
                // A block comment in a directive counts as a space.
                self.bump();
                self.bump();
                while !(self.at_end() || self.peek() == Some('*') && self.peek_at(1) == Some('/')) {
                    self.bump();
                }
                self.bump();
                self.bump();
                out.push(' ');
                continue;
            }
            out.push(c);
            self.bump();
        }
        out
    }

    fn skip_line_rest(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.bump();
        }
    }

    fn skip_space_and_comments(&mut self) -> Result<()> {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => self.skip_line_rest(),
                (Some('/'), Some('*')) => {
                    let start = self.pos();
                    self.bump();
                    self.bump();
                    loop {
                        match (self.peek(), self.peek_at(1)) {
                            (Some('*'), Some('/')) => {
                                self.bump();
                                self.bump();
                                break;
                            }
                            (Some(_), _) => {
                                self.bump();
                            }
                            (None, _) => {
                                return Err(IdlError::at(&start, "a /* comment that never ends"))
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn token(&mut self) -> Result<Tok> {
        let pos = self.pos();
        let Some(c) = self.peek() else {
            return Ok(Tok::Eof);
        };
        if c.is_ascii_alphabetic() || c == '_' {
            let mut s = String::new();
            while let Some(c) = self
                .peek()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                s.push(c);
                self.bump();
            }
            return Ok(Tok::Ident(s));
        }
        if c.is_ascii_digit() || (c == '.' && self.peek_at(1).is_some_and(|d| d.is_ascii_digit())) {
            return self.number(&pos);
        }
        if c == '"' {
            self.bump();
            let mut s = String::new();
            loop {
                match self.bump() {
                    Some('"') => return Ok(Tok::Str(s)),
                    Some('\\') => s.push(self.escape(&pos)?),
                    Some('\n') | None => {
                        return Err(IdlError::at(&pos, "a string literal that never ends"))
                    }
                    Some(c) => s.push(c),
                }
            }
        }
        if c == '\'' {
            self.bump();
            let ch = match self.bump() {
                Some('\\') => self.escape(&pos)?,
                Some(c) if c != '\'' && c != '\n' => c,
                _ => return Err(IdlError::at(&pos, "an empty or broken character literal")),
            };
            if self.bump() != Some('\'') {
                return Err(IdlError::at(
                    &pos,
                    "a character literal holds one character",
                ));
            }
            return Ok(Tok::Char(ch));
        }
        if c == '@' {
            self.bump();
            return Ok(Tok::Punct("@"));
        }
        for p in PUNCTS {
            if p.chars()
                .enumerate()
                .all(|(k, pc)| self.peek_at(k) == Some(pc))
            {
                for _ in 0..p.len() {
                    self.bump();
                }
                return Ok(Tok::Punct(p));
            }
        }
        Err(IdlError::at(&pos, format!("unexpected character {c:?}")))
    }

    fn escape(&mut self, pos: &Pos) -> Result<char> {
        let c = self
            .bump()
            .ok_or_else(|| IdlError::at(pos, "an escape at the end of the input"))?;
        Ok(match c {
            'n' => '\n',
            't' => '\t',
            'v' => '\u{b}',
            'b' => '\u{8}',
            'r' => '\r',
            'f' => '\u{c}',
            'a' => '\u{7}',
            '0'..='7' => {
                let mut v = c.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.bump();
                        }
                        None => break,
                    }
                }
                char::from_u32(v).unwrap_or('\0')
            }
            'x' => {
                let mut v = 0u32;
                let mut n = 0;
                while let Some(d) = self.peek().and_then(|d| d.to_digit(16)).filter(|_| n < 2) {
                    v = v * 16 + d;
                    n += 1;
                    self.bump();
                }
                if n == 0 {
                    return Err(IdlError::at(pos, "\\x needs hex digits"));
                }
                char::from_u32(v).unwrap_or('\0')
            }
            'u' => {
                let mut v = 0u32;
                let mut n = 0;
                while let Some(d) = self.peek().and_then(|d| d.to_digit(16)).filter(|_| n < 4) {
                    v = v * 16 + d;
                    n += 1;
                    self.bump();
                }
                char::from_u32(v).ok_or_else(|| IdlError::at(pos, "\\u names no character"))?
            }
            other => other,
        })
    }

    fn number(&mut self, pos: &Pos) -> Result<Tok> {
        let mut s = String::new();
        let hex = self.peek() == Some('0') && matches!(self.peek_at(1), Some('x' | 'X'));
        if hex {
            self.bump();
            self.bump();
            while let Some(c) = self.peek().filter(|c| c.is_ascii_hexdigit()) {
                s.push(c);
                self.bump();
            }
            return u128::from_str_radix(&s, 16).map(Tok::Int).map_err(|_| {
                IdlError::at(pos, "a hexadecimal literal without digits or too large")
            });
        }
        let mut float = false;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() {
                s.push(c);
            } else if c == '.' && !float {
                float = true;
                s.push(c);
            } else if matches!(c, 'e' | 'E') {
                float = true;
                s.push(c);
                self.bump();
                if let Some(sign) = self.peek().filter(|c| *c == '+' || *c == '-') {
                    s.push(sign);
                    self.bump();
                }
                continue;
            } else {
                break;
            }
            self.bump();
        }
        // IDL fixed-point literals end in d/D; read as floating point.
        if matches!(self.peek(), Some('d' | 'D')) {
            self.bump();
            float = true;
        }
        if float {
            return s
                .parse::<f64>()
                .map(Tok::Float)
                .map_err(|_| IdlError::at(pos, format!("{s}: not a number")));
        }
        let (digits, radix) = if s.len() > 1 && s.starts_with('0') {
            (&s[1..], 8)
        } else {
            (s.as_str(), 10)
        };
        u128::from_str_radix(digits, radix)
            .map(Tok::Int)
            .map_err(|_| IdlError::at(pos, format!("{s}: not an integer literal (or too large)")))
    }
}
