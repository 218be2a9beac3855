//! Interned labels: a route name becomes a small `Copy` index once, so that a poll stores a
//! number, never a string.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

/// The process-wide intern table. Locked when a thread meets a name for the first time and
/// when a report or a [`Stalls`](crate::Stalls) snapshot turns an index back into its name:
/// never per poll, and never per request once a thread has seen its routes.
static TABLE: Mutex<Table> = Mutex::new(Table {
    names: Vec::new(),
    index: BTreeMap::new(),
});

thread_local! {
    /// The labels this thread has made, sorted by name (the intern table's own leaked copy):
    /// after a thread's first request to a route, [`Label::new`] finds its label here by a
    /// binary search, with no lock and no allocation.
    static SEEN: RefCell<Vec<(&'static str, Label)>> = const { RefCell::new(Vec::new()) };
}

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
/// costs one store. [`Label::new`] may be called per request: each thread remembers the labels
/// it has made, so only a thread's first use of a name takes the table's lock. Every distinct
/// name is kept for the life of the process, so name route templates (`"GET /users/{id}"`),
/// never raw request paths.
///
/// Labels are process-wide: one made through one [`Watch`](crate::Watch) is valid with any
/// other.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(u32);

impl Label {
    /// The label of `name`; the same name always gives the same label. A thread's first call
    /// with a name interns it under a process-wide lock; its later calls with that name find
    /// the label in the thread's own map, with no lock and no allocation.
    ///
    /// # Panics
    ///
    /// If more than 65,536 distinct names were interned (a slot keeps 16 bits of the index).
    pub fn new(name: &str) -> Label {
        // `try_with`: a thread being torn down (a label made in a destructor) has no map left
        // and goes to the table.
        let seen = SEEN.try_with(|seen| {
            let seen = seen.borrow();
            let at = seen.binary_search_by(|&(seen, _)| seen.cmp(name));
            at.map(|at| seen[at].1)
        });
        if let Ok(Ok(label)) = seen {
            return label;
        }
        let (label, interned, first) = Label::intern(name);
        #[cfg(feature = "metrics")]
        if first {
            crate::metrics::route_named(interned);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = first;
        let _ = SEEN.try_with(|seen| {
            let mut seen = seen.borrow_mut();
            if let Err(at) = seen.binary_search_by(|&(seen, _)| seen.cmp(name)) {
                seen.insert(at, (interned, label));
            }
        });
        label
    }

    /// Interns `name` in the process-wide table: its label, the table's copy of the name, and
    /// whether this call added it.
    fn intern(name: &str) -> (Label, &'static str, bool) {
        let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((&name, &index)) = table.index.get_key_value(name) {
            return (Label(index), name, false);
        }
        // A slot keeps 16 bits of the index (slot.rs, `PollState`).
        let index = u16::try_from(table.names.len()).expect("more than 65,536 labels");
        let index = u32::from(index);
        let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
        table.names.push(name);
        table.index.insert(name, index);
        (Label(index), name, true)
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

    #[test]
    fn every_thread_gets_the_same_label_for_a_name() {
        let here = Label::new("label-test /threads");
        let there = std::thread::spawn(|| Label::new("label-test /threads"))
            .join()
            .expect("the thread does not panic");
        assert_eq!(here, there);
        assert_eq!(
            Label::new("label-test /threads"),
            here,
            "from this thread's map"
        );
    }
}
