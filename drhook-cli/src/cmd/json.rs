//! `drhook json`: profiles as one `drhook-profile` JSON document, or in
//! Hatchet's literal format.

use std::path::PathBuf;

use super::{EXIT_OK, Global, emit, load_all};
use crate::error::{Error, Result};
use crate::profile::json;
use crate::report::hatchet;

/// Arguments of `drhook json`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Profiles (text or JSON) or directories of them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Hatchet's GraphFrame JSON (for hatchet.GraphFrame.from_json): one
    /// call tree, a dataframe indexed by (node, rank, thread), and the
    /// run's metadata (a `metadata` member for gf.metadata / Thicket)
    /// instead of the drhook-profile schema.
    #[arg(long, conflicts_with = "hatchet_literal")]
    pub hatchet: bool,
    /// Hatchet's literal format (for hatchet.GraphFrame.from_literal): one
    /// root per task and thread, `task`/`thread` as metric columns.
    #[arg(long)]
    pub hatchet_literal: bool,
    /// Indented output.
    #[arg(long)]
    pub pretty: bool,
}

/// Runs the command.
pub fn run(a: &Args, g: &Global) -> Result<u8> {
    let profiles = load_all(&a.files, g)?;
    fn to_text<T: serde::Serialize>(v: &T, pretty: bool) -> Result<String> {
        if pretty {
            serde_json::to_string_pretty(v)
        } else {
            serde_json::to_string(v)
        }
        .map_err(|e| Error::msg(e.to_string()))
    }
    // The document in the schema's member order ("format" first).
    let mut s = if a.hatchet {
        to_text(&hatchet::graphframe(&profiles), a.pretty)?
    } else if a.hatchet_literal {
        to_text(&hatchet::literal(&profiles), a.pretty)?
    } else {
        to_text(&json::document(&profiles), a.pretty)?
    };
    s.push('\n');
    emit(a.output.as_deref(), s.as_bytes())?;
    Ok(EXIT_OK)
}
