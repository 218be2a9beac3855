//! Interned labels: a route name becomes a small `Copy` index once, so that a poll stores a
//! number, never a string.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

/// The process-wide intern table. Locked only when a label is made and when a report or a
/// [`Stalls`](crate::Stalls) snapshot turns an index back into its name: never per poll.
static TABLE: Mutex<Table> = Mutex::new(Table {
    names: Vec::new(),
    index: BTreeMap::new(),
});

struct Table {
    /// Index to name. Names are leaked: they live for the process, like the routes they name.
    names: Vec<&'static str>,
    /// Name to index, so that the same name always gives the same label.
    index: BTreeMap<&'static str, u32>,
}

/// What a wrapped future is doing, as the caller names it: usually the route, such as
/// `"GET /bad"` or `"/bad"`. The name is kept exactly as given.
///
/// A `Label` is a `Copy` index into a process-wide intern table, so stamping it on every poll
/// costs one store. Make labels once (at startup, or once per route), not per request:
/// [`Label::new`] takes a lock, and every distinct name is kept for the life of the process,
/// so use route templates (`"GET /users/:id"`), never raw request paths.
///
/// Labels are process-wide: one made through one [`Watch`](crate::Watch) is valid with any
/// other.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(u32);

impl Label {
    /// Interns `name` and returns its label; the same name always gives the same label.
    ///
    /// # Panics
    ///
    /// If more than 65,536 distinct names were interned (a slot keeps 16 bits of the index).
    pub fn new(name: &str) -> Label {
        let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&index) = table.index.get(name) {
            return Label(index);
        }
        // A slot keeps 16 bits of the index (slot.rs, `PollState`).
        let index = u16::try_from(table.names.len()).expect("more than 65,536 labels");
        let index = u32::from(index);
        let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
        table.names.push(name);
        table.index.insert(name, index);
        Label(index)
    }

    /// The name this label was made from, exactly as given. Takes the intern table's lock.
    pub fn name(self) -> &'static str {
        let table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        // Labels are only made by `new`, which pushes before it returns the index.
        table.names[self.0 as usize]
    }

    /// The raw index, as stored in a thread's slot.
    pub(crate) fn index(self) -> u32 {
        self.0
    }

    /// The label of a raw index read back from a slot.
    pub(crate) fn from_index(index: u32) -> Label {
        Label(index)
    }
}

impl fmt::Debug for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Label").field(&self.name()).finish()
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Label;

    #[test]
    fn the_same_name_gives_the_same_label() {
        let a = Label::new("label-test /same");
        let b = Label::new("label-test /same");
        let c = Label::new("label-test /other");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.name(), "label-test /same");
        assert_eq!(c.to_string(), "label-test /other");
        assert_eq!(format!("{a:?}"), r#"Label("label-test /same")"#);
    }
}
