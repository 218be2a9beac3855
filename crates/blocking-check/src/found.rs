//! What the context-aware check reports: findings (a listed blocking call reached on the
//! reactor, and how) and limits (what it could not see into).

/// A place in the sources.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Site {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A listed blocking call reached on the reactor.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The list's entry it matched, e.g. `std::fs::read`.
    pub call: String,
    pub site: Site,
    /// The functions called on the way, outermost first, each `label (file:line)`.
    pub via: Vec<String>,
}

/// Something the check could not see into on that walk.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Limit {
    pub what: String,
    pub site: Site,
}

/// What one walk found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Walked {
    pub findings: Vec<Finding>,
    pub limits: Vec<Limit>,
}
