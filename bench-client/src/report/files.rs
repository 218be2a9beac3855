//! Writing a report's outputs: each file atomically, so that a reader (or a killed run) sees
//! either the old file or the new one, never half of one.

use std::io::Write as _;
use std::path::Path;

use serde::Serialize;

/// A record as pretty JSON with a final newline.
pub fn json(record: &impl Serialize) -> String {
    serde_json::to_string_pretty(record).expect("a report always serialises") + "\n"
}

/// Writes each `(file name, contents)` into `dir`, creating it if needed.
pub fn write_all(dir: &Path, outputs: &[(String, String)]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, contents) in outputs {
        write_atomically(&dir.join(name), contents.as_bytes())?;
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file in the same folder, synced, renamed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("out");
    let temp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}
