//! What every experiment's views share: how figures and names are printed ([`text`]), the
//! sections every document opens and closes with ([`sections`]), writing files atomically
//! ([`files`]), and the pages' generated blocks ([`block`], [`pages`]). Each experiment's own
//! views (its tables, plots and findings) are in its folder, `experiments/<name>/views`; none
//! of these knows an experiment.
//!
//! - [`text`]: how numbers and names are printed in every table, finding and legend;
//! - [`sections`]: the heading and failures every results document has;
//! - [`files`]: writing it all, atomically;
//! - [`block`]: the one format of every generated block of a page;
//! - [`pages`]: the figures blocks of the README and the lesson pages, copied from results.

pub mod block;
pub mod files;
pub mod pages;
pub mod sections;
pub mod stacks;
pub mod text;

pub use files::write_atomically;

/// A view: its file name and its contents.
pub type View = (String, String);
