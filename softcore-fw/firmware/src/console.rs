//! The UART console: lines typed on the serial port, read as commands.
//!
//! The console is the local, physical path to the switch's settings, so
//! the network cannot change them. A line ends at a carriage return or a
//! line feed; a line too long for [`MAX_LINE`] is thrown away whole.
//!
//! | command | effect |
//! |---|---|
//! | `key <64 hex digits>` | checks management requests with this key from now on |
//! | `insecure` | checks them with the publicly known insecure key (bench networks only) |
//! | `ip <a.b.c.d/prefix>` | replaces the management port's IPv4 address with this static one |
//! | `ip dhcp` | asks a DHCP server for the management port's address ([`crate::addressing`]) |
//! | `help` | lists the commands |

use weft_proto::{Key, KeyParseError};

use crate::addressing::AddressMode;
use crate::uart::Uart;

/// The longest line kept: a `key` command with a little room around it.
pub const MAX_LINE: usize = 96;

/// What a console line asks for.
pub enum Command {
    /// Check requests with this key.
    Key(Key),
    /// Check requests with the insecure public key.
    Insecure,
    /// Take the management port's IPv4 address from here.
    Address(AddressMode),
    /// List the commands.
    Help,
}

impl Default for Console {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a console line is not a command.
pub enum CommandError {
    /// The first word is no command.
    Unknown,
    /// The key's digits are wrong.
    Key(KeyParseError),
    /// The address is neither `a.b.c.d/prefix` nor `dhcp`.
    Address,
    /// The line was longer than [`MAX_LINE`] bytes.
    TooLong,
}

/// The line being typed.
pub struct Console {
    line: weft_proto::heapless::Vec<u8, MAX_LINE>,
    overflowed: bool,
}

impl Console {
    /// A console with nothing typed.
    pub const fn new() -> Self {
        Console {
            line: weft_proto::heapless::Vec::new(),
            overflowed: false,
        }
    }

    /// Reads what the UART has received; the command of the first line
    /// completed, if any (the rest waits for the next call).
    pub fn poll(&mut self, uart: &mut Uart) -> Option<Result<Command, CommandError>> {
        while let Some(byte) = uart.read_byte() {
            if byte == b'\r' || byte == b'\n' {
                let overflowed = core::mem::take(&mut self.overflowed);
                let line = core::mem::take(&mut self.line);
                if overflowed {
                    return Some(Err(CommandError::TooLong));
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return Some(parse(&line));
            }
            if self.line.push(byte).is_err() {
                self.overflowed = true;
            }
        }
        None
    }
}

/// The command on `line`.
fn parse(line: &[u8]) -> Result<Command, CommandError> {
    let text = core::str::from_utf8(line)
        .map_err(|_| CommandError::Unknown)?
        .trim();
    let (word, argument) = text.split_once(' ').unwrap_or((text, ""));
    let argument = argument.trim();
    match word {
        "key" => Key::parse_hex(argument)
            .map(Command::Key)
            .map_err(CommandError::Key),
        "insecure" if argument.is_empty() => Ok(Command::Insecure),
        "ip" if argument == "dhcp" => Ok(Command::Address(AddressMode::Dhcp)),
        "ip" => argument
            .parse()
            .map(|cidr| Command::Address(AddressMode::Static(cidr)))
            .map_err(|()| CommandError::Address),
        "help" if argument.is_empty() => Ok(Command::Help),
        _ => Err(CommandError::Unknown),
    }
}

/// The console's help text.
pub const HELP: &str = "commands:\r\n\
    \x20 key <64 hex digits>  check management requests with this key\r\n\
    \x20 insecure             use the public insecure key (bench networks only)\r\n\
    \x20 ip <a.b.c.d/prefix>  set the management port's IPv4 address\r\n\
    \x20 ip dhcp              ask a DHCP server for the management port's address\r\n";
