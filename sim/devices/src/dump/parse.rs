//! Parsing the text `lspci -xxxx` prints: for each function a header line
//! naming it (`03:00.0 3D controller: ...`, optionally with a domain), then
//! lines of sixteen hex bytes each led by their offset (`00: de 10 ...`,
//! up to `ff0: ...`).

use std::fmt;

use weft_pcie::config::space::CONFIG_SPACE_SIZE;
use weft_pcie::Bdf;

/// Bytes on one dump line.
const BYTES_PER_LINE: usize = 16;

/// One function's configuration space read from a dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpedFunction {
    /// The function the header line names (the domain is dropped).
    pub address: Bdf,
    /// The rest of the header line: lspci's description.
    pub description: String,
    /// 4096 bytes; offsets the dump did not list read as zero (`lspci -xxx`
    /// prints only the first 256).
    pub bytes: Vec<u8>,
    /// The highest offset listed, plus one.
    pub listed: usize,
}

/// Why a dump could not be read; every variant names the 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DumpError {
    /// The text holds no function at all.
    Empty,
    /// Hex bytes before any header line naming their function.
    DataBeforeHeader {
        /// Line number.
        line: usize,
    },
    /// A header line that does not start with `[domain:]bus:device.function`.
    BadHeader {
        /// Line number.
        line: usize,
        /// The first word of the line.
        text: String,
    },
    /// An offset that is not hex.
    BadOffset {
        /// Line number.
        line: usize,
        /// What stood before the colon.
        text: String,
    },
    /// An offset that is not a multiple of 16.
    MisalignedOffset {
        /// Line number.
        line: usize,
        /// The offset.
        offset: usize,
    },
    /// An offset past the 4 KiB configuration space.
    OffsetOutOfRange {
        /// Line number.
        line: usize,
        /// The offset.
        offset: usize,
    },
    /// A byte that is not two hex digits.
    BadByte {
        /// Line number.
        line: usize,
        /// 1-based position of the byte on the line.
        column: usize,
        /// The text found.
        text: String,
    },
    /// A line with other than 16 bytes.
    WrongByteCount {
        /// Line number.
        line: usize,
        /// Bytes found.
        count: usize,
    },
    /// The same offset twice for one function.
    DuplicateOffset {
        /// Line number.
        line: usize,
        /// The offset.
        offset: usize,
    },
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DumpError::Empty => write!(
                f,
                "the dump names no function; expected `lspci -xxxx` output starting with a line like `03:00.0 ...`"
            ),
            DumpError::DataBeforeHeader { line } => write!(
                f,
                "line {line}: hex bytes before the line naming their function (`bb:dd.f ...`)"
            ),
            DumpError::BadHeader { line, text } => write!(
                f,
                "line {line}: `{text}` is not a function address; expected `bb:dd.f` or `dddd:bb:dd.f`"
            ),
            DumpError::BadOffset { line, text } => {
                write!(f, "line {line}: offset `{text}` is not hexadecimal")
            }
            DumpError::MisalignedOffset { line, offset } => write!(
                f,
                "line {line}: offset {offset:#x} is not a multiple of 16, as lspci prints them"
            ),
            DumpError::OffsetOutOfRange { line, offset } => write!(
                f,
                "line {line}: offset {offset:#x} is past the 4096-byte configuration space"
            ),
            DumpError::BadByte { line, column, text } => write!(
                f,
                "line {line}: byte {column} is `{text}`, not two hex digits"
            ),
            DumpError::WrongByteCount { line, count } => write!(
                f,
                "line {line}: {count} bytes where lspci prints 16; was the dump cut?"
            ),
            DumpError::DuplicateOffset { line, offset } => write!(
                f,
                "line {line}: offset {offset:#x} appears twice for the same function"
            ),
        }
    }
}

impl std::error::Error for DumpError {}

/// Parses `bus:device.function`, with an optional `domain:` in front.
fn parse_address(text: &str) -> Option<Bdf> {
    let parts: Vec<&str> = text.split(':').collect();
    let (bus, rest) = match parts.as_slice() {
        [bus, rest] => (*bus, *rest),
        [domain, bus, rest] if u16::from_str_radix(domain, 16).is_ok() => (*bus, *rest),
        _ => return None,
    };
    let (device, function) = rest.split_once('.')?;
    let bus = u8::from_str_radix(bus, 16).ok()?;
    let device = u8::from_str_radix(device, 16).ok().filter(|&d| d < 32)?;
    let function = u8::from_str_radix(function, 16).ok().filter(|&f| f < 8)?;
    Some(Bdf::new(bus, device, function))
}

/// Parses every function in `text`.
pub fn parse(text: &str) -> Result<Vec<DumpedFunction>, DumpError> {
    let mut functions: Vec<DumpedFunction> = Vec::new();
    let mut seen = vec![false; CONFIG_SPACE_SIZE / BYTES_PER_LINE];
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        let Some(first) = trimmed.split_whitespace().next() else {
            continue;
        };
        let Some(offset_text) = first.strip_suffix(':') else {
            let address = parse_address(first).ok_or_else(|| DumpError::BadHeader {
                line,
                text: first.to_string(),
            })?;
            functions.push(DumpedFunction {
                address,
                description: trimmed[first.len()..].trim().to_string(),
                bytes: vec![0; CONFIG_SPACE_SIZE],
                listed: 0,
            });
            seen.fill(false);
            continue;
        };
        let function = functions
            .last_mut()
            .ok_or(DumpError::DataBeforeHeader { line })?;
        let offset = usize::from_str_radix(offset_text, 16).map_err(|_| DumpError::BadOffset {
            line,
            text: offset_text.to_string(),
        })?;
        if offset >= CONFIG_SPACE_SIZE {
            return Err(DumpError::OffsetOutOfRange { line, offset });
        }
        if offset % BYTES_PER_LINE != 0 {
            return Err(DumpError::MisalignedOffset { line, offset });
        }
        let slot = offset / BYTES_PER_LINE;
        if seen[slot] {
            return Err(DumpError::DuplicateOffset { line, offset });
        }
        seen[slot] = true;
        let mut bytes = Vec::with_capacity(BYTES_PER_LINE);
        for (column, word) in trimmed[first.len()..].split_whitespace().enumerate() {
            let byte = (word.len() == 2)
                .then(|| u8::from_str_radix(word, 16).ok())
                .flatten()
                .ok_or_else(|| DumpError::BadByte {
                    line,
                    column: column + 1,
                    text: word.to_string(),
                })?;
            bytes.push(byte);
        }
        if bytes.len() != BYTES_PER_LINE {
            return Err(DumpError::WrongByteCount {
                line,
                count: bytes.len(),
            });
        }
        function.bytes[offset..offset + BYTES_PER_LINE].copy_from_slice(&bytes);
        function.listed = function.listed.max(offset + BYTES_PER_LINE);
    }
    if functions.is_empty() {
        return Err(DumpError::Empty);
    }
    Ok(functions)
}
