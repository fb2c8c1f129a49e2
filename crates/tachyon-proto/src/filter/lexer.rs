//! Tokens of a DDS SQL filter expression (DDS 1.4 Annex B), each with its column.

use super::error::FilterError;

/// One token and the column (1-based, in characters) where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub column: usize,
}

/// What a token is. Keywords are identifiers here; the parser compares them
/// case-insensitively.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A name: `a`, `a.b.c`, `Color::RED`.
    Ident(String),
    /// An integer (decimal or `0x` hex, with an optional sign).
    Int(i128),
    /// A floating-point number.
    Float(f64),
    /// A quoted string (`'…'`, or Annex B's `` `…' ``), quotes removed, `''` read as `'`.
    Str(String),
    /// `%n`.
    Param(usize),
    /// `=`, `<>`/`!=`, `<`, `<=`, `>`, `>=`.
    Op(CmpOp),
    LParen,
    RParen,
    End,
}

/// A relational operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=`.
    Eq,
    /// `<>` or `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

impl CmpOp {
    /// The operator as written in DDS SQL.
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    pub fn swapped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            other => other,
        }
    }
}

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(i) => format!("`{i}`"),
            Tok::Float(x) => format!("`{x}`"),
            Tok::Str(s) => format!("'{s}'"),
            Tok::Param(n) => format!("`%{n}`"),
            Tok::Op(op) => format!("`{}`", op.as_str()),
            Tok::LParen => "`(`".to_owned(),
            Tok::RParen => "`)`".to_owned(),
            Tok::End => "end of expression".to_owned(),
        }
    }
}

/// Splits `input` into tokens, ending with [`Tok::End`].
pub(crate) fn tokenize(input: &str) -> Result<Vec<Token>, FilterError> {
    let chars: Vec<char> = input.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (kind, next) = match c {
            '(' => (Tok::LParen, i + 1),
            ')' => (Tok::RParen, i + 1),
            '=' => (Tok::Op(CmpOp::Eq), i + 1),
            '<' => match chars.get(i + 1) {
                Some('=') => (Tok::Op(CmpOp::Le), i + 2),
                Some('>') => (Tok::Op(CmpOp::Ne), i + 2),
                _ => (Tok::Op(CmpOp::Lt), i + 1),
            },
            '>' => match chars.get(i + 1) {
                Some('=') => (Tok::Op(CmpOp::Ge), i + 2),
                _ => (Tok::Op(CmpOp::Gt), i + 1),
            },
            '!' if chars.get(i + 1) == Some(&'=') => (Tok::Op(CmpOp::Ne), i + 2),
            '\'' | '`' => string(&chars, i)?,
            '%' => param(&chars, i)?,
            c if c.is_ascii_digit() || c == '.' => number(&chars, i)?,
            '-' | '+'
                if chars
                    .get(i + 1)
                    .is_some_and(|d| d.is_ascii_digit() || *d == '.') =>
            {
                number(&chars, i)?
            }
            c if c.is_ascii_alphabetic() || c == '_' => ident(&chars, i)?,
            other => {
                return Err(FilterError::Syntax {
                    column,
                    expected: "a name, a value, a parameter, an operator or a parenthesis",
                    found: format!("`{other}`"),
                })
            }
        };
        out.push(Token { kind, column });
        i = next;
    }
    out.push(Token {
        kind: Tok::End,
        column: chars.len() + 1,
    });
    Ok(out)
}

fn string(chars: &[char], start: usize) -> Result<(Tok, usize), FilterError> {
    let mut s = String::new();
    let mut i = start + 1;
    loop {
        match chars.get(i) {
            None | Some('\n') => {
                return Err(FilterError::Syntax {
                    column: start + 1,
                    expected: "a string closed by `'` on the same line",
                    found: "an unterminated string".to_owned(),
                })
            }
            Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                s.push('\'');
                i += 2;
            }
            Some('\'') => return Ok((Tok::Str(s), i + 1)),
            Some(&c) => {
                s.push(c);
                i += 1;
            }
        }
    }
}

fn param(chars: &[char], start: usize) -> Result<(Tok, usize), FilterError> {
    let mut i = start + 1;
    let mut n: usize = 0;
    while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
        n = n.saturating_mul(10).saturating_add(d as usize);
        i += 1;
    }
    let digits = i - start - 1;
    if digits == 0 || digits > 2 {
        return Err(FilterError::Syntax {
            column: start + 1,
            expected: "a parameter `%0` to `%99`",
            found: format!("`{}`", chars[start..i].iter().collect::<String>()),
        });
    }
    Ok((Tok::Param(n), i))
}

fn ident(chars: &[char], start: usize) -> Result<(Tok, usize), FilterError> {
    let mut i = start;
    let part = |c: char| c.is_ascii_alphanumeric() || c == '_';
    loop {
        while chars.get(i).is_some_and(|&c| part(c)) {
            i += 1;
        }
        // `a.b` (member path) and `Module::ENUMERATOR` continue the name.
        let sep = match (chars.get(i), chars.get(i + 1)) {
            (Some('.'), _) => 1,
            (Some(':'), Some(':')) => 2,
            _ => break,
        };
        let after = chars.get(i + sep).copied();
        if !after.is_some_and(|c| c.is_ascii_alphabetic() || c == '_') {
            return Err(FilterError::Syntax {
                column: i + sep + 1,
                expected: "a member or enumerator name",
                found: after.map_or("end of expression".to_owned(), |c| format!("`{c}`")),
            });
        }
        i += sep;
    }
    Ok((Tok::Ident(chars[start..i].iter().collect()), i))
}

fn number(chars: &[char], start: usize) -> Result<(Tok, usize), FilterError> {
    let mut i = start;
    let negative = chars[i] == '-';
    if matches!(chars[i], '-' | '+') {
        i += 1;
    }
    let bad = |end: usize| FilterError::Syntax {
        column: start + 1,
        expected: "a number",
        found: format!("`{}`", chars[start..end].iter().collect::<String>()),
    };
    if chars.get(i) == Some(&'0') && matches!(chars.get(i + 1), Some('x' | 'X')) {
        let digits_start = i + 2;
        let mut j = digits_start;
        while chars.get(j).is_some_and(char::is_ascii_hexdigit) {
            j += 1;
        }
        let text: String = chars[digits_start..j].iter().collect();
        if text.is_empty() || chars.get(j).is_some_and(|c| c.is_ascii_alphanumeric()) {
            return Err(bad(j.max(digits_start)));
        }
        let v = i128::from_str_radix(&text, 16).map_err(|_| bad(j))?;
        return Ok((Tok::Int(if negative { -v } else { v }), j));
    }
    let mut j = i;
    let mut float = false;
    while chars.get(j).is_some_and(char::is_ascii_digit) {
        j += 1;
    }
    if chars.get(j) == Some(&'.') {
        float = true;
        j += 1;
        while chars.get(j).is_some_and(char::is_ascii_digit) {
            j += 1;
        }
    }
    if matches!(chars.get(j), Some('e' | 'E')) {
        float = true;
        j += 1;
        if matches!(chars.get(j), Some('+' | '-')) {
            j += 1;
        }
        let exp_start = j;
        while chars.get(j).is_some_and(char::is_ascii_digit) {
            j += 1;
        }
        if j == exp_start {
            return Err(bad(j));
        }
    }
    if chars
        .get(j)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
    {
        return Err(bad(j + 1));
    }
    let text: String = chars[start..j].iter().collect();
    if float {
        let v: f64 = text.parse().map_err(|_| bad(j))?;
        if !v.is_finite() {
            return Err(bad(j));
        }
        Ok((Tok::Float(v), j))
    } else {
        let v: i128 = text.parse().map_err(|_| bad(j))?;
        Ok((Tok::Int(v), j))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        tokenize(s).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn tokens() {
        assert_eq!(
            kinds("a.b >= -0x1F AND c<>'it''s' OR %12 != 1.5e3"),
            vec![
                Tok::Ident("a.b".into()),
                Tok::Op(CmpOp::Ge),
                Tok::Int(-31),
                Tok::Ident("AND".into()),
                Tok::Ident("c".into()),
                Tok::Op(CmpOp::Ne),
                Tok::Str("it's".into()),
                Tok::Ident("OR".into()),
                Tok::Param(12),
                Tok::Op(CmpOp::Ne),
                Tok::Float(1500.0),
                Tok::End
            ]
        );
        assert_eq!(kinds("`x'"), vec![Tok::Str("x".into()), Tok::End]);
        assert_eq!(
            kinds("Color::RED"),
            vec![Tok::Ident("Color::RED".into()), Tok::End]
        );
    }

    #[test]
    fn errors_name_the_column() {
        let col = |s: &str| tokenize(s).unwrap_err().column();
        assert_eq!(col("x = 'abc"), Some(5));
        assert_eq!(col("x = %100"), Some(5));
        assert_eq!(col("x = %"), Some(5));
        assert_eq!(col("x # 1"), Some(3));
        assert_eq!(col("a. = 1"), Some(3));
        assert_eq!(col("x = 12ab"), Some(5));
        assert_eq!(col("x = 0x"), Some(5));
        assert_eq!(col("x = 1e"), Some(5));
    }
}
