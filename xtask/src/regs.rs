//! Writing the register map's documentation, docs/registers.md, from weft-regs.

use std::{
    fs,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result};

/// Renders the data plane's register map into `docs/registers.md` and returns the path written.
pub fn write_docs(root: &Path) -> Result<PathBuf> {
    let mut text = String::new();
    weft_regs::write_markdown(&mut text, &weft_regs::csr::MAP)
        .context("rendering the register map")?;
    let path = root.join("docs").join("registers.md");
    fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    println!("regs: wrote {}", path.display());
    Ok(path)
}
