//! clippy's `disallowed_methods`, run the way a user runs it: `cargo clippy` from the
//! installed toolchain with `CLIPPY_CONF_DIR` pointing at the experiment's `clippy.toml`, its
//! `--message-format=json` read for that lint's warnings.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::walk::Site;

/// One `clippy::disallowed_methods` warning.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// The disallowed path, as clippy names it (`std::thread::sleep`).
    pub call: String,
    pub site: Site,
}

/// Runs clippy on `packages` from `root`, with the configuration in `conf_dir`, and returns
/// its `disallowed_methods` warnings. Cargo replays the warnings of a crate it does not
/// re-check, and re-checks one when the configuration changes (clippy tracks the file).
pub fn run(root: &Path, conf_dir: &Path, packages: &[String]) -> Result<Vec<Warning>, String> {
    let mut command = Command::new("cargo");
    command
        .current_dir(root)
        .env("CLIPPY_CONF_DIR", conf_dir)
        .args(["clippy", "--message-format=json"]);
    for package in packages {
        command.args(["-p", package]);
    }
    let output = command
        .output()
        .map_err(|error| format!("cargo clippy: {error}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("cargo clippy failed: {stderr}"));
    }
    Ok(parse(&String::from_utf8_lossy(&output.stdout)))
}

/// The `disallowed_methods` warnings in cargo's JSON messages, one a line, in order, without
/// repeats (a file built for two targets is reported twice).
pub fn parse(json_lines: &str) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for line in json_lines.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(warning) = warning(&message)
            && !warnings.contains(&warning)
        {
            warnings.push(warning);
        }
    }
    warnings
}

fn warning(message: &Value) -> Option<Warning> {
    if message["reason"] != "compiler-message" {
        return None;
    }
    let diagnostic = &message["message"];
    if diagnostic["code"]["code"] != "clippy::disallowed_methods" {
        return None;
    }
    let text = diagnostic["message"].as_str()?;
    let call = text.split('`').nth(1)?.to_owned();
    let span = diagnostic["spans"]
        .as_array()?
        .iter()
        .find(|span| span["is_primary"] == true)?;
    Some(Warning {
        call,
        site: Site {
            file: span["file_name"].as_str()?.to_owned(),
            line: usize::try_from(span["line_start"].as_u64()?).ok()?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_lints_warnings_and_nothing_else() {
        let lines = [
            r#"{"reason":"compiler-artifact"}"#,
            r#"{"reason":"compiler-message","message":{"code":{"code":"clippy::disallowed_methods"},"message":"use of a disallowed method `std::thread::sleep`","spans":[{"is_primary":false,"file_name":"x.rs","line_start":1},{"is_primary":true,"file_name":"crates/a/src/main.rs","line_start":52}]}}"#,
            r#"{"reason":"compiler-message","message":{"code":{"code":"clippy::needless_return"},"message":"unneeded `return`","spans":[]}}"#,
            "not json",
        ];
        let mut text = lines.join("\n");
        text.push('\n');
        text.push_str(lines[1]);
        assert_eq!(
            parse(&text),
            [Warning {
                call: "std::thread::sleep".to_owned(),
                site: Site {
                    file: "crates/a/src/main.rs".to_owned(),
                    line: 52
                }
            }]
        );
    }
}
