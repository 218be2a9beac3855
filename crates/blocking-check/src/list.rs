//! The list of calls the context-aware check knows: blocking calls, and offloads whose closure
//! runs off the reactor (`blocking.txt`, which a user extends with their own).

use std::collections::HashSet;

/// The list shipped with the check: the calls the lessons use and each stack's offload.
pub const BUILTIN: &str = include_str!("../blocking.txt");

/// Blocking calls and offloads, each a path such as `std::fs::read`.
#[derive(Debug, Clone, Default)]
pub struct CallList {
    pub blocking: Vec<String>,
    pub offload: Vec<String>,
}

/// Which list a path is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Blocking,
    Offload,
}

impl CallList {
    /// Reads the text format: `[blocking]` and `[offload]` sections, one path a line, `#`
    /// comments.
    pub fn parse(text: &str) -> Result<CallList, String> {
        let mut list = CallList::default();
        let mut section = None;
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            match line {
                "" => {}
                "[blocking]" => section = Some(Kind::Blocking),
                "[offload]" => section = Some(Kind::Offload),
                path if is_path(path) => match section {
                    Some(Kind::Blocking) => list.blocking.push(path.to_owned()),
                    Some(Kind::Offload) => list.offload.push(path.to_owned()),
                    None => return Err(format!("line {}: a path before any section", number + 1)),
                },
                other => return Err(format!("line {}: not a path: {other}", number + 1)),
            }
        }
        Ok(list)
    }

    /// The list shipped with the check.
    pub fn builtin() -> CallList {
        CallList::parse(BUILTIN).expect("blocking.txt parses")
    }

    /// Adds the entries of `other` (a user's own list) to these.
    pub fn extend(&mut self, other: CallList) {
        self.blocking.extend(other.blocking);
        self.offload.extend(other.offload);
    }

    fn entries(&self, kind: Kind) -> &[String] {
        match kind {
            Kind::Blocking => &self.blocking,
            Kind::Offload => &self.offload,
        }
    }

    /// The entry a call of `path` (aliases expanded) matches exactly.
    pub fn path_call(&self, kind: Kind, path: &str) -> Option<&str> {
        self.entries(kind)
            .iter()
            .find(|entry| *entry == path)
            .map(String::as_str)
    }

    /// The entry a method call `.name(..)` may be, in a file that names `crates`: an entry
    /// whose last segment is `name`, whose one before is a type (capitalised, so
    /// `std::thread::sleep` is no method), and whose crate the file names (`std` always
    /// counts).
    pub fn method_call(&self, kind: Kind, name: &str, crates: &HashSet<String>) -> Option<&str> {
        self.entries(kind)
            .iter()
            .find(|entry| {
                let segments: Vec<&str> = entry.split("::").collect();
                let is_method = segments.len() >= 3
                    && segments[segments.len() - 2].starts_with(char::is_uppercase);
                is_method
                    && segments.last() == Some(&name)
                    && (segments[0] == "std" || crates.contains(segments[0]))
            })
            .map(String::as_str)
    }
}

fn is_path(text: &str) -> bool {
    text.split("::").all(|segment| {
        !segment.is_empty() && segment.chars().all(|c| c.is_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sections_and_skips_comments() {
        let list =
            CallList::parse("# c\n[blocking]\nstd::fs::read # why\n[offload]\nsmol::unblock\n")
                .unwrap();
        assert_eq!(list.blocking, ["std::fs::read"]);
        assert_eq!(list.offload, ["smol::unblock"]);
    }

    #[test]
    fn refuses_a_path_outside_a_section_and_a_non_path() {
        assert!(CallList::parse("std::fs::read\n").is_err());
        assert!(CallList::parse("[blocking]\nstd::fs::read()\n").is_err());
    }

    #[test]
    fn a_method_needs_its_crate_named_in_the_file() {
        let list = CallList::builtin();
        let none = HashSet::new();
        let rusqlite = HashSet::from(["rusqlite".to_owned()]);
        assert_eq!(list.method_call(Kind::Blocking, "query_row", &none), None);
        assert_eq!(
            list.method_call(Kind::Blocking, "query_row", &rusqlite),
            Some("rusqlite::Connection::query_row")
        );
        assert_eq!(
            list.method_call(Kind::Blocking, "lock", &none),
            Some("std::sync::Mutex::lock")
        );
        // `std::fs::read` and `std::thread::sleep` are functions, never methods.
        assert_eq!(list.method_call(Kind::Blocking, "read", &none), None);
        assert_eq!(list.method_call(Kind::Blocking, "sleep", &none), None);
    }

    /// One fact in one place: clippy's configuration lists the same blocking calls.
    #[test]
    fn clippy_lists_the_same_blocking_calls() {
        let clippy = include_str!("../clippy/clippy.toml");
        let mut listed: Vec<&str> = clippy
            .split("path = \"")
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap())
            .collect();
        let builtin = CallList::builtin();
        let mut ours: Vec<&str> = builtin.blocking.iter().map(String::as_str).collect();
        listed.sort_unstable();
        ours.sort_unstable();
        assert_eq!(listed, ours);
    }
}
