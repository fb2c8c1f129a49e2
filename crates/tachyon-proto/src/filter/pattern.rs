//! Patterns of LIKE (SQL: `%` any run, `_` one character) and MATCH (RTI Connext's
//! POSIX-fnmatch style: `*`, `?`, `[a-z]`, `[!x]`, `\` escapes, `,` between alternatives).

/// One element of a pattern.
#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Char(char),
    One,
    Any,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// A compiled pattern: matches when any alternative matches the whole string.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pattern {
    alternatives: Vec<Vec<Piece>>,
}

impl Pattern {
    /// A LIKE pattern.
    pub(crate) fn like(p: &str) -> Pattern {
        let pieces = p
            .chars()
            .map(|c| match c {
                '%' => Piece::Any,
                '_' => Piece::One,
                c => Piece::Char(c),
            })
            .collect();
        Pattern {
            alternatives: vec![pieces],
        }
    }

    /// A MATCH pattern, or why it is malformed.
    pub(crate) fn matching(p: &str) -> Result<Pattern, &'static str> {
        let chars: Vec<char> = p.chars().collect();
        let mut alternatives = Vec::new();
        let mut cur = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                ',' => alternatives.push(std::mem::take(&mut cur)),
                '*' => cur.push(Piece::Any),
                '?' => cur.push(Piece::One),
                '\\' => {
                    i += 1;
                    let c = *chars.get(i).ok_or("`\\` at the end of the pattern")?;
                    cur.push(Piece::Char(c));
                }
                '[' => {
                    let (piece, next) = class(&chars, i)?;
                    cur.push(piece);
                    i = next;
                    continue;
                }
                c => cur.push(Piece::Char(c)),
            }
            i += 1;
        }
        alternatives.push(cur);
        Ok(Pattern { alternatives })
    }

    /// Whether `s` matches.
    pub(crate) fn matches(&self, s: &str) -> bool {
        self.alternatives.iter().any(|a| matches(a, s))
    }
}

/// `[...]` starting at `start`: the class and the index after `]`.
fn class(chars: &[char], start: usize) -> Result<(Piece, usize), &'static str> {
    let mut i = start + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i).ok_or("`[` without `]`")?;
        if c == ']' && !first {
            return Ok((Piece::Class { negated, ranges }, i + 1));
        }
        first = false;
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']') {
            let end = chars[i + 2];
            if end < c {
                return Err("a range in `[…]` ends before it starts");
            }
            ranges.push((c, end));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
}

fn one(p: &Piece, c: char) -> bool {
    match p {
        Piece::Char(x) => *x == c,
        Piece::One => true,
        Piece::Any => false,
        Piece::Class { negated, ranges } => {
            ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&c)) != *negated
        }
    }
}

/// Wildcard matching with one backtrack point (the last `Any`): O(len(p) × len(s)).
fn matches(p: &[Piece], s: &str) -> bool {
    let s: Vec<char> = s.chars().collect();
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(Piece::Any) => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(piece) if one(piece, s[si]) => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|x| *x == Piece::Any)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like() {
        let p = Pattern::like("B%E_");
        assert!(p.matches("BLUE!"));
        assert!(p.matches("BE1"));
        assert!(!p.matches("BLUE"));
        assert!(Pattern::like("%").matches(""));
        assert!(Pattern::like("%a%b%").matches("xxaxxbxx"));
        assert!(!Pattern::like("a").matches("ab"));
        assert!(Pattern::like("_é").matches("xé"));
    }

    #[test]
    fn matching() {
        let p = Pattern::matching("RED,BL*,G[a-z]?EN").unwrap();
        assert!(p.matches("RED"));
        assert!(p.matches("BLUE"));
        assert!(p.matches("GreEN"));
        assert!(!p.matches("GREEN"));
        assert!(Pattern::matching("[!A]x").unwrap().matches("Bx"));
        assert!(!Pattern::matching("[!A]x").unwrap().matches("Ax"));
        assert!(Pattern::matching("a\\*").unwrap().matches("a*"));
        assert!(Pattern::matching("[]]").unwrap().matches("]"));
        assert!(Pattern::matching("[a").is_err());
        assert!(Pattern::matching("[z-a]").is_err());
        assert!(Pattern::matching("a\\").is_err());
    }
}
