//! Where the switch's key comes from: the command line, a key file, the
//! environment, or an explicit request for insecure mode.
//!
//! The key is 64 hexadecimal digits (`weft_proto::auth`, "Provisioning the
//! key"). The first source given wins, in this order: `--key`, `--key-file`,
//! `WEFT_KEY`, `WEFT_KEY_FILE`. `--insecure` takes the publicly known key
//! instead, and only when asked for by that flag.

use std::fmt;
use std::io;
use std::path::PathBuf;

use weft_proto::{Key, KeyParseError};

/// The environment variable holding the key's hexadecimal digits.
pub const KEY_ENV: &str = "WEFT_KEY";
/// The environment variable naming a key file.
pub const KEY_FILE_ENV: &str = "WEFT_KEY_FILE";

/// What the operator gave to find the key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySources {
    /// `--key`: the digits themselves.
    pub key: Option<String>,
    /// `--key-file`: a file holding the digits.
    pub key_file: Option<PathBuf>,
    /// `--insecure`: use the insecure public key.
    pub insecure: bool,
    /// The value of [`KEY_ENV`].
    pub env_key: Option<String>,
    /// The value of [`KEY_FILE_ENV`].
    pub env_key_file: Option<PathBuf>,
}

/// Where the key in use came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyOrigin {
    /// `--key`.
    Argument,
    /// `--key-file`.
    File(PathBuf),
    /// [`KEY_ENV`].
    Env,
    /// The file [`KEY_FILE_ENV`] names.
    EnvFile(PathBuf),
    /// `--insecure`.
    Insecure,
}

impl fmt::Display for KeyOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyOrigin::Argument => f.write_str("--key"),
            KeyOrigin::File(path) => write!(f, "key file {}", path.display()),
            KeyOrigin::Env => write!(f, "{KEY_ENV}"),
            KeyOrigin::EnvFile(path) => {
                write!(f, "key file {} (from {KEY_FILE_ENV})", path.display())
            }
            KeyOrigin::Insecure => f.write_str("--insecure"),
        }
    }
}

/// Why no key could be had.
#[derive(Debug)]
pub enum KeyError {
    /// No source was given.
    Missing,
    /// A source did not hold a valid key.
    Invalid {
        /// Which source.
        origin: KeyOrigin,
        /// What is wrong with it.
        error: KeyParseError,
    },
    /// A key file could not be read.
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::Missing => write!(
                f,
                "no key for the switch: give its 64 hexadecimal digits with --key <hex>, a file \
                 holding them with --key-file <path>, or set {KEY_ENV} or {KEY_FILE_ENV}; for a \
                 switch running in insecure mode, pass --insecure"
            ),
            KeyError::Invalid { origin, error } => {
                write!(f, "the key from {origin} is not valid: {error}")
            }
            KeyError::Unreadable { path, source } => write!(
                f,
                "could not read the key file {}: {source}; check the path and its permissions",
                path.display()
            ),
        }
    }
}

impl std::error::Error for KeyError {}

impl KeySources {
    /// The key to use and where it came from.
    pub fn resolve(&self) -> Result<(Key, KeyOrigin), KeyError> {
        if self.insecure {
            return Ok((Key::insecure_public(), KeyOrigin::Insecure));
        }
        if let Some(hex) = &self.key {
            return parse(hex, KeyOrigin::Argument);
        }
        if let Some(path) = &self.key_file {
            return read(path, KeyOrigin::File(path.clone()));
        }
        if let Some(hex) = self.env_key.as_ref().filter(|v| !v.trim().is_empty()) {
            return parse(hex, KeyOrigin::Env);
        }
        if let Some(path) = self
            .env_key_file
            .as_ref()
            .filter(|p| !p.as_os_str().is_empty())
        {
            return read(path, KeyOrigin::EnvFile(path.clone()));
        }
        Err(KeyError::Missing)
    }
}

fn parse(hex: &str, origin: KeyOrigin) -> Result<(Key, KeyOrigin), KeyError> {
    match Key::parse_hex(hex) {
        Ok(key) => Ok((key, origin)),
        Err(error) => Err(KeyError::Invalid { origin, error }),
    }
}

fn read(path: &PathBuf, origin: KeyOrigin) -> Result<(Key, KeyOrigin), KeyError> {
    let text = std::fs::read_to_string(path).map_err(|source| KeyError::Unreadable {
        path: path.clone(),
        source,
    })?;
    parse(&text, origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "8f14e45fceea167a5a36dedd4bea2543c4ca4238a0b923820dcc509a6f75849b";

    #[test]
    fn nothing_given_is_an_error_that_names_every_way_to_give_a_key() {
        let error = KeySources::default().resolve().expect_err("no key");
        let text = error.to_string();
        for way in ["--key", "--key-file", "WEFT_KEY", "--insecure"] {
            assert!(text.contains(way), "{text} lacks {way}");
        }
    }

    #[test]
    fn the_command_line_wins_over_the_environment() {
        let sources = KeySources {
            key: Some(HEX.into()),
            env_key: Some("not a key".into()),
            ..KeySources::default()
        };
        let (_, origin) = sources.resolve().expect("valid");
        assert_eq!(origin, KeyOrigin::Argument);
    }

    #[test]
    fn the_environment_is_used_when_no_flag_is_given() {
        let sources = KeySources {
            env_key: Some(format!("{HEX}\n")),
            ..KeySources::default()
        };
        assert_eq!(sources.resolve().expect("valid").1, KeyOrigin::Env);
    }

    #[test]
    fn insecure_is_the_public_key() {
        let sources = KeySources {
            insecure: true,
            ..KeySources::default()
        };
        let (key, origin) = sources.resolve().expect("insecure");
        assert!(key.is_insecure());
        assert_eq!(origin, KeyOrigin::Insecure);
    }

    #[test]
    fn a_bad_key_says_where_it_came_from() {
        let sources = KeySources {
            key: Some("abcd".into()),
            ..KeySources::default()
        };
        let text = sources.resolve().expect_err("short").to_string();
        assert!(
            text.contains("--key") && text.contains("64 hexadecimal digits"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_key_file_is_named() {
        let sources = KeySources {
            key_file: Some(PathBuf::from("/nonexistent/weft.key")),
            ..KeySources::default()
        };
        let text = sources.resolve().expect_err("missing").to_string();
        assert!(text.contains("/nonexistent/weft.key"), "{text}");
    }
}
