//! Facts about the code that the pages state by hand, checked against the code: a crate's
//! version against `Cargo.lock`, and each default, limit or count named in
//! `docs/code-facts.toml` against the line of code that sets it (`tests/facts.rs`). A page
//! that says `compio 0.12` while the workspace locks compio 0.19.2, or a port the server no
//! longer binds by default, then fails the docs check instead of misleading a reader.
//!
//! A version is *mentioned* where a crate that `Cargo.lock` holds is followed by a version of
//! at least major and minor: "compio 0.19", "`tokio` 1.54.1", "in tokio 1.54.1's". It agrees
//! with the lock when its numbers begin one of the locked versions of that crate (a crate may
//! be locked at several). Generated blocks are left out: their versions are what a run used.
//!
//! A fact is a pair of patterns, one for the page and one for the code, each with `{}` where
//! the value stands ([`values`]): both are read with their whitespace collapsed, so that a
//! line break in a sentence or between an attribute and its field does not matter.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::prose::without_generated_blocks;

/// `Cargo.lock`'s packages: each crate's name and the versions it is locked at.
pub fn locked_versions(lock: &str) -> Result<BTreeMap<String, Vec<String>>, toml::de::Error> {
    #[derive(Deserialize)]
    struct Lock {
        package: Vec<Package>,
    }
    #[derive(Deserialize)]
    struct Package {
        name: String,
        version: String,
    }
    let lock: Lock = toml::from_str(lock)?;
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in lock.package {
        versions
            .entry(package.name)
            .or_default()
            .push(package.version);
    }
    Ok(versions)
}

/// A crate's version named on a page: the line, the crate and the version as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub line: usize,
    pub name: String,
    pub version: String,
}

/// The versions `markdown` names of the crates that `is_crate` knows (by lower-cased name),
/// outside generated blocks, in order.
pub fn version_mentions(markdown: &str, is_crate: impl Fn(&str) -> bool) -> Vec<Mention> {
    let text = without_generated_blocks(markdown);
    let mut found = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            let name = pair[0].trim_start_matches(['(', '[', '`', '*']);
            let name = name
                .strip_suffix("'s")
                .unwrap_or(name)
                .trim_end_matches(['`', '*']);
            let name = name.to_lowercase();
            if let Some(version) = version(pair[1])
                && is_crate(&name)
            {
                found.push(Mention {
                    line: at + 1,
                    name,
                    version,
                });
            }
        }
    }
    found
}

/// `word` as a version of at least major and minor ("0.19", "v1.54.1's,"), if it is one.
fn version(word: &str) -> Option<String> {
    let word = word.trim_start_matches(['`', 'v']);
    let word = word.strip_suffix("'s").unwrap_or(word);
    let word = word.trim_end_matches(|c: char| !c.is_ascii_digit());
    let parts: Vec<&str> = word.split('.').collect();
    let numbers = parts
        .iter()
        .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()));
    (parts.len() >= 2 && numbers).then(|| word.to_owned())
}

/// Whether `mentioned` ("0.19") is the beginning of `locked` ("0.19.2"), number by number.
pub fn agrees(mentioned: &str, locked: &str) -> bool {
    let locked: Vec<&str> = locked.split(['.', '-', '+']).collect();
    let mentioned: Vec<&str> = mentioned.split('.').collect();
    mentioned.len() <= locked.len() && mentioned.iter().zip(&locked).all(|(m, l)| m == l)
}

/// One fact a page states about the code, as `docs/code-facts.toml` lists it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    /// What the value is, for the failure's message.
    pub what: String,
    /// The page, from the repository's root, and the words that give the value there.
    pub page: String,
    pub says: String,
    /// The source file, from the repository's root, and the code that sets the value.
    pub code: String,
    pub is: String,
    /// How many of the code's units make one of the page's (1000 for a page in ms and code
    /// in µs); 1 when absent.
    #[serde(default)]
    pub times: Option<f64>,
}

/// `docs/code-facts.toml`: the facts, each a `[[fact]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Facts {
    pub fact: Vec<Fact>,
}

impl Facts {
    pub fn parse(toml: &str) -> Result<Facts, toml::de::Error> {
        toml::from_str(toml)
    }
}

/// `text` with every run of whitespace made one space.
fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The values that `pattern` finds in `text`, both read with their whitespace collapsed: at
/// each place where the words before `{}` stand, the run of letters, digits, `.`, `,` and `_`
/// that follows (less a final `.` or `,`), if the words after `{}` come next.
pub fn values(text: &str, pattern: &str) -> Vec<String> {
    let (text, pattern) = (collapsed(text), collapsed(pattern));
    let Some((before, after)) = pattern.split_once("{}") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(before) {
        let start = from + at + before.len();
        let run: String = (text[start..].chars())
            .take_while(|c| c.is_alphanumeric() || ".,_".contains(*c))
            .collect();
        let value = run.trim_end_matches(['.', ',']);
        if !value.is_empty() && text[start + value.len()..].starts_with(after) {
            found.push(value.to_owned());
        }
        from = start;
    }
    found
}

/// Whether the page's value `said` is the code's `set`, `times` code units to a page unit:
/// numbers compare as numbers (`10,000` is `10_000`, `0.25` ms is `250` µs), anything else
/// as written.
pub fn same_value(said: &str, set: &str, times: Option<f64>) -> bool {
    let number = |value: &str| value.replace([',', '_'], "").parse::<f64>().ok();
    match (number(said), number(set)) {
        (Some(said), Some(set)) => (said * times.unwrap_or(1.0) - set).abs() < 1e-9,
        _ => said == set,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_found_after_locked_crates_only() {
        let page = "On compio 0.12 and `tokio` 1.54.1's timer (in tokio 1.54.1, `src/x.rs`),\n\
                    ntex 2, with 3 threads, uvloop 0.23.0 and [async-io 2.6.0](x.md).\n\
                    <!-- results:begin x -->\ntokio 1.0\n<!-- results:end -->\n";
        let known = ["compio", "tokio", "ntex", "async-io"];
        let found: Vec<String> = version_mentions(page, |name| known.contains(&name))
            .into_iter()
            .map(|m| format!("{}:{} {}", m.line, m.name, m.version))
            .collect();
        assert_eq!(
            found,
            [
                "1:compio 0.12",
                "1:tokio 1.54.1",
                "1:tokio 1.54.1",
                "2:async-io 2.6.0"
            ]
        );
    }

    #[test]
    fn a_mention_agrees_with_the_version_it_begins() {
        assert!(agrees("0.19", "0.19.2"));
        assert!(agrees("0.19.2", "0.19.2"));
        assert!(agrees("1.54", "1.54.1"));
        assert!(!agrees("0.12", "0.19.2"));
        assert!(!agrees("0.1", "0.19.2"));
        assert!(!agrees("0.19.2.1", "0.19.2"));
    }

    #[test]
    fn locked_versions_are_read_per_crate() {
        let lock = "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"1.2.3\"\n\n\
                    [[package]]\nname = \"a\"\nversion = \"2.0.0\"\n\n\
                    [[package]]\nname = \"b\"\nversion = \"0.1.0\"\nsource = \"x\"\n";
        let locked = locked_versions(lock).expect("a lock file");
        assert_eq!(locked["a"], ["1.2.3", "2.0.0"]);
        assert_eq!(locked["b"], ["0.1.0"]);
    }

    #[test]
    fn a_pattern_finds_its_values_across_line_breaks() {
        let code = "    #[arg(long, default_value_t = 8765)]\n    pub port: u16,\n\
                    pub const ROWS: i64 = 10_000;\n";
        assert_eq!(values(code, "default_value_t = {})] pub port:"), ["8765"]);
        assert_eq!(values(code, "const ROWS: i64 = {};"), ["10_000"]);
        let page = "fills it with 10,000 rows. Its first line within 10\ns, or 30 s.";
        assert_eq!(values(page, "fills it with {} rows"), ["10,000"]);
        assert_eq!(values(page, "within {} s"), ["10"]);
        assert!(values(page, "within {} ms").is_empty());
        assert!(values(page, "no placeholder").is_empty());
    }

    #[test]
    fn values_compare_as_numbers_in_their_units() {
        assert!(same_value("10,000", "10_000", None));
        assert!(same_value("0.25", "250", Some(1000.0)));
        assert!(!same_value("0.3", "250", Some(1000.0)));
        assert!(same_value("LOCALHOST", "LOCALHOST", None));
        assert!(!same_value("8766", "8765", None));
    }
}
