//! Reading board files: TOML into [`Board`], then checked.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::model::Board;
use crate::validate::{self, Invalid};

/// The directory of the board files shipped with weft.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Why a board could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// No board file of that name.
    NotFound {
        /// The name asked for.
        name: String,
        /// The boards there are.
        known: Vec<String>,
    },
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// The file is not a board: bad TOML, a missing or unknown field, a
    /// value of the wrong type. The message names the field and line.
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's account, with the field and the line.
        message: String,
    },
    /// The file parses but its facts do not hold together.
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found.
        problems: Vec<Invalid>,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound { name, known } => write!(
                f,
                "no board named {name:?}; the boards are: {}",
                known.join(", ")
            ),
            LoadError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            LoadError::Parse { path, message } => write!(f, "{}: {message}", path.display()),
            LoadError::Invalid { path, problems } => {
                write!(f, "{}: {} problem(s):", path.display(), problems.len())?;
                for problem in problems {
                    write!(f, "\n  - {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// Parses a board from TOML text without checking it.
pub fn parse(text: &str, path: &Path) -> Result<Board, LoadError> {
    toml::from_str(text).map_err(|err| LoadError::Parse {
        path: path.to_owned(),
        message: err.to_string(),
    })
}

/// Parses and checks a board from TOML text.
pub fn from_str(text: &str, path: &Path) -> Result<Board, LoadError> {
    let board = parse(text, path)?;
    let mut problems = validate::check(&board);
    if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
        if stem != board.board.name && path.extension().is_some() {
            problems.push(Invalid::NameMismatch {
                name: board.board.name.clone(),
                stem: stem.to_owned(),
            });
        }
    }
    if problems.is_empty() {
        Ok(board)
    } else {
        Err(LoadError::Invalid {
            path: path.to_owned(),
            problems,
        })
    }
}

/// Reads and checks the board file at `path`.
pub fn from_path(path: &Path) -> Result<Board, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|error| LoadError::Io {
        path: path.to_owned(),
        error,
    })?;
    from_str(&text, path)
}

/// The names of the boards in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .filter_map(|path| path.file_stem()?.to_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// Reads and checks the board called `name` from weft's board directory.
pub fn by_name(name: &str) -> Result<Board, LoadError> {
    let dir = data_dir();
    let path = dir.join(format!("{name}.toml"));
    if !path.is_file() {
        return Err(LoadError::NotFound {
            name: name.to_owned(),
            known: names(&dir),
        });
    }
    from_path(&path)
}
