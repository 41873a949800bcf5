//! Shell-style path patterns for `--path`.
//!
//! `*` matches any run of bytes within one path component, `**` any run
//! across components, `?` one byte other than `/`, `[abc]`, `[a-z]` and
//! `[!a-z]` one byte of (or not of) a set, and `\` takes the next byte
//! literally. A pattern with no `/` is matched against the last component
//! of the path (`*.sst`), as `find -name` does; any other pattern against
//! the whole absolute path (`/db/**/*.log`).
//!
//! Matching simulates the pattern as a set of states, one byte of the path
//! at a time: time is linear in the path length whatever the pattern, and
//! nothing recurses.

use crate::Error;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Byte(u8),
    AnyByte,
    Class {
        ranges: Vec<(u8, u8)>,
        negated: bool,
    },
    Star,
    DoubleStar,
}

/// A compiled path pattern.
#[derive(Debug, Clone)]
pub struct Glob {
    tokens: Vec<Token>,
    name_only: bool,
}

impl Glob {
    /// Compiles `pattern`; an unclosed `[` or a trailing `\` is an error.
    pub fn new(pattern: &str) -> Result<Self, Error> {
        let bad = |why: &str| Error::Usage(format!("bad path pattern {pattern:?}: {why}"));
        let p = pattern.as_bytes();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < p.len() {
            let t = match p[i] {
                b'*' => {
                    let mut n = 0;
                    while i < p.len() && p[i] == b'*' {
                        n += 1;
                        i += 1;
                    }
                    i -= 1;
                    if n > 1 {
                        Token::DoubleStar
                    } else {
                        Token::Star
                    }
                }
                b'?' => Token::AnyByte,
                b'\\' => {
                    i += 1;
                    Token::Byte(*p.get(i).ok_or_else(|| bad("ends with \\"))?)
                }
                b'[' => {
                    let mut j = i + 1;
                    let negated = matches!(p.get(j), Some(b'!' | b'^'));
                    if negated {
                        j += 1;
                    }
                    let mut ranges = Vec::new();
                    let mut first = true;
                    loop {
                        let c = *p.get(j).ok_or_else(|| bad("unclosed ["))?;
                        if c == b']' && !first {
                            break;
                        }
                        first = false;
                        if p.get(j + 1) == Some(&b'-') && p.get(j + 2).is_some_and(|&e| e != b']') {
                            ranges.push((c, p[j + 2]));
                            j += 3;
                        } else {
                            ranges.push((c, c));
                            j += 1;
                        }
                    }
                    i = j;
                    Token::Class { ranges, negated }
                }
                c => Token::Byte(c),
            };
            tokens.push(t);
            i += 1;
        }
        Ok(Glob {
            tokens,
            name_only: !p.contains(&b'/'),
        })
    }

    /// True when `path` matches.
    pub fn matches(&self, path: &[u8]) -> bool {
        let text = if self.name_only {
            let trimmed = path.strip_suffix(b"/").unwrap_or(path);
            match trimmed.iter().rposition(|&b| b == b'/') {
                Some(i) => &trimmed[i + 1..],
                None => trimmed,
            }
        } else {
            path
        };
        let n = self.tokens.len();
        let mut now = vec![false; n + 1];
        let mut next = vec![false; n + 1];
        now[0] = true;
        self.close(&mut now);
        for &c in text {
            next.iter_mut().for_each(|s| *s = false);
            let mut any = false;
            for i in 0..n {
                if !now[i] {
                    continue;
                }
                let (stay, advance) = match &self.tokens[i] {
                    Token::Byte(b) => (false, *b == c),
                    Token::AnyByte => (false, c != b'/'),
                    Token::Class { ranges, negated } => {
                        let inside = ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
                        (false, inside != *negated && c != b'/')
                    }
                    Token::Star => (c != b'/', false),
                    Token::DoubleStar => (true, false),
                };
                if stay {
                    next[i] = true;
                    any = true;
                }
                if advance {
                    next[i + 1] = true;
                    any = true;
                }
            }
            if !any {
                return false;
            }
            self.close(&mut next);
            std::mem::swap(&mut now, &mut next);
        }
        now[n]
    }

    /// Stars match nothing too: a state before a star also stands after it.
    fn close(&self, states: &mut [bool]) {
        for i in 0..self.tokens.len() {
            if states[i] && matches!(self.tokens[i], Token::Star | Token::DoubleStar) {
                states[i + 1] = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, path: &str) -> bool {
        Glob::new(p).unwrap().matches(path.as_bytes())
    }

    #[test]
    fn stars_classes_and_names() {
        assert!(m("*.sst", "/db/000012.sst"));
        assert!(!m("*.sst", "/db/000012.log"));
        assert!(m("/db/*.log", "/db/LOG.log"));
        assert!(!m("/db/*.log", "/db/sub/x.log"));
        assert!(m("/db/**.log", "/db/sub/x.log"));
        assert!(m("/db/**/x.log", "/db/a/b/x.log"));
        assert!(m("/tmp/??", "/tmp/ab"));
        assert!(!m("/tmp/??", "/tmp/a/"));
        assert!(m("[0-9][!a-z]*", "/x/1A"));
        assert!(!m("[0-9][!a-z]*", "/x/1a"));
        assert!(m("a\\*", "/a*"));
        assert!(m("**", "/anything/at/all"));
        assert!(m("/", "/"));
        assert!(!m("*.sst", ""));
    }

    #[test]
    fn bad_patterns_are_errors() {
        assert!(Glob::new("[abc").is_err());
        assert!(Glob::new("x\\").is_err());
        assert!(Glob::new("[]]").unwrap().matches(b"]"));
    }
}
