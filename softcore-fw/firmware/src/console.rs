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
//! | `ip <a.b.c.d/prefix>` | replaces the management port's IPv4 address with this static one, without a default gateway |
//! | `ip <a.b.c.d/prefix> via <g.h.i.j>` | the same, with a default route through the gateway `g.h.i.j` on its subnet |
//! | `ip dhcp` | asks a DHCP server for the management port's address ([`crate::addressing`]) |
//! | `ip` | shows the management port's setting, and the lease under DHCP |
//! | `hosts` | lists the host ports the next start presents virtual switches on |
//! | `host <port> <slots>` | makes a port of this switch a host port with that many slots, stored for the next start |
//! | `host <switch>:<port> <slots>` | the same on another switch of the fabric, by its switch ID in hex as `hosts` lists it |
//! | `host remove [<switch>:]<port>` | takes a host port out, stored for the next start |
//! | `functions` | lists the fabric's functions, each with where it is bound |
//! | `bind <bb:dd.f> <host> <slot>` | binds the function to the host's slot, as `weftctl bind` does |
//! | `unbind <host> <slot> [graceful\|managed\|surprise]` | unbinds the slot, as `weftctl unbind` does (graceful by default) |
//! | `help` | lists the commands |
//!
//! Each `ip` setting is stored in flash and applied again at the next
//! start ([`crate::netstore`]); the host ports are stored in the saved
//! configuration (weft-fabric's `persist`) and apply from the next start.
//! `bind` and `unbind` are management requests answered exactly as the
//! management server answers them (weft-fabric's `management::handle`),
//! the console standing for an authenticated client: on a board without a
//! management port they are how functions reach hosts.

use weft_pcie::{Bdf, BdfParseError};
use weft_proto::{
    BoundFunctions, FabricId, HostIndex, Key, KeyParseError, Request, SlotIndex, UnbindMode,
};

use crate::uart::Uart;
use smoltcp::wire::Ipv4Cidr;
use weft_fabric::network_setting::{NetworkSetting, StaticAddress, StaticAddressError};

/// The longest line kept: a `key` command with a little room around it.
pub const MAX_LINE: usize = 96;

/// What a console line asks for.
pub enum Command {
    /// Check requests with this key.
    Key(Key),
    /// Check requests with the insecure public key.
    Insecure,
    /// Take the management port's IPv4 address from here.
    Address(NetworkSetting),
    /// Show where the management port's address comes from.
    ShowAddress,
    /// List the host ports the next start presents.
    Hosts,
    /// Change a host port for the next start.
    Host(HostEdit),
    /// List the fabric's functions and where each is bound.
    Functions,
    /// A management request: `bind` or `unbind`.
    Fabric(Request),
    /// List the commands.
    Help,
}

impl Default for Console {
    fn default() -> Self {
        Self::new()
    }
}

/// A change to the host ports, for the next start (weft-fabric's
/// `settings::set_host_port`, `remove_host_port`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostEdit {
    /// Make `port` a host port with `slots` slots.
    Set {
        /// Its port.
        port: HostPlace,
        /// Slots of the virtual switch presented there.
        slots: u8,
    },
    /// Take `port` out.
    Remove {
        /// Its port.
        port: HostPlace,
    },
}

/// A port named on the console: of this switch, or of the switch whose
/// switch ID is given (the manager reads that switch's mailbox in-band).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPlace {
    /// The switch ID; `None` for this switch.
    pub switch: Option<u64>,
    /// The port.
    pub port: u8,
}

/// Why a console line is not a command.
pub enum CommandError {
    /// The first word is no command.
    Unknown,
    /// The key's digits are wrong.
    Key(KeyParseError),
    /// The address is neither `a.b.c.d/prefix` (optionally `via g.h.i.j`) nor `dhcp`.
    Address,
    /// The `host` command's arguments are not `<port> <slots>` or
    /// `remove <port>`.
    Host,
    /// The `bind` command's arguments are not `<bb:dd.f> <host> <slot>`.
    Bind,
    /// The `bind` command's function is no routing ID.
    Function(BdfParseError),
    /// The `unbind` command's arguments are not `<host> <slot> [mode]`.
    Unbind,
    /// The address, prefix and gateway do not go together.
    Static(StaticAddressError),
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
        "hosts" if argument.is_empty() => Ok(Command::Hosts),
        "host" => parse_host(argument)
            .map(Command::Host)
            .ok_or(CommandError::Host),
        "ip" if argument.is_empty() => Ok(Command::ShowAddress),
        "ip" if argument == "dhcp" => Ok(Command::Address(NetworkSetting::Dhcp)),
        "ip" => parse_static(argument).map(Command::Address),
        "functions" if argument.is_empty() => Ok(Command::Functions),
        "bind" => parse_bind(argument).map(Command::Fabric),
        "unbind" => parse_unbind(argument)
            .map(Command::Fabric)
            .ok_or(CommandError::Unbind),
        "help" if argument.is_empty() => Ok(Command::Help),
        _ => Err(CommandError::Unknown),
    }
}

/// The `bind` command's arguments, `<bb:dd.f> <host> <slot>`, host and
/// slot in decimal: a Bind of that one function, with no precondition.
fn parse_bind(argument: &str) -> Result<Request, CommandError> {
    let words: weft_proto::heapless::Vec<&str, 4> =
        argument.split_ascii_whitespace().take(4).collect();
    let [function, host, slot] = words[..] else {
        return Err(CommandError::Bind);
    };
    let function: Bdf = function.parse().map_err(CommandError::Function)?;
    let (Ok(host), Ok(slot)) = (host.parse(), slot.parse()) else {
        return Err(CommandError::Bind);
    };
    let mut functions = BoundFunctions::new();
    functions
        .push(FabricId::from(function))
        .map_err(|_| CommandError::Bind)?;
    Ok(Request::Bind {
        host: HostIndex(host),
        slot: SlotIndex(slot),
        functions,
        if_generation: None,
    })
}

/// The `unbind` command's arguments, `<host> <slot> [graceful|managed|surprise]`:
/// an Unbind of that slot, graceful unless another mode is named, with no
/// precondition.
fn parse_unbind(argument: &str) -> Option<Request> {
    let words: weft_proto::heapless::Vec<&str, 4> =
        argument.split_ascii_whitespace().take(4).collect();
    let (host, slot, mode) = match words[..] {
        [host, slot] => (host, slot, UnbindMode::Graceful),
        [host, slot, "graceful"] => (host, slot, UnbindMode::Graceful),
        [host, slot, "managed"] => (host, slot, UnbindMode::Managed),
        [host, slot, "surprise"] => (host, slot, UnbindMode::Surprise),
        _ => return None,
    };
    Some(Request::Unbind {
        host: HostIndex(host.parse().ok()?),
        slot: SlotIndex(slot.parse().ok()?),
        mode,
        if_generation: None,
    })
}

/// The `host` command's arguments, `<port> <slots>` or `remove <port>`,
/// the port and slots in decimal, the port of another switch written
/// `<switch ID in hex>:<port>`.
fn parse_host(argument: &str) -> Option<HostEdit> {
    let words: weft_proto::heapless::Vec<&str, 3> =
        argument.split_ascii_whitespace().take(3).collect();
    match words[..] {
        ["remove", port] => Some(HostEdit::Remove {
            port: parse_place(port)?,
        }),
        [port, slots] => Some(HostEdit::Set {
            port: parse_place(port)?,
            slots: slots.parse().ok()?,
        }),
        _ => None,
    }
}

/// `<port>` or `<switch ID in hex>:<port>`.
fn parse_place(word: &str) -> Option<HostPlace> {
    let (switch, port) = match word.split_once(':') {
        Some((switch, port)) => (Some(u64::from_str_radix(switch, 16).ok()?), port),
        None => (None, word),
    };
    Some(HostPlace {
        switch,
        port: port.parse().ok()?,
    })
}

/// The static address `a.b.c.d/prefix`, with `via g.h.i.j` after it for a gateway.
fn parse_static(argument: &str) -> Result<NetworkSetting, CommandError> {
    let mut words = argument.split_ascii_whitespace();
    let address: Option<Ipv4Cidr> = words.next().and_then(|word| word.parse().ok());
    let gateway = match (words.next(), words.next(), words.next()) {
        (None, _, _) => Ok(None),
        (Some("via"), Some(gateway), None) => gateway.parse().map(Some).map_err(|_| ()),
        _ => Err(()),
    };
    match (address, gateway) {
        (Some(cidr), Ok(gateway)) => StaticAddress::new(cidr.address(), cidr.prefix_len(), gateway)
            .map(NetworkSetting::Static)
            .map_err(CommandError::Static),
        _ => Err(CommandError::Address),
    }
}

/// The console's help text.
pub const HELP: &str = "commands:\r\n\
    \x20 key <64 hex digits>  check management requests with this key\r\n\
    \x20 insecure             use the public insecure key (bench networks only)\r\n\
    \x20 ip <a.b.c.d/prefix> [via <g.h.i.j>]\r\n\
    \x20                      set the management port's IPv4 address (and default gateway)\r\n\
    \x20 ip dhcp              ask a DHCP server for the management port's address\r\n\
    \x20 ip                   show the management port's address setting\r\n\
    \x20 (`ip` settings are stored in flash and kept across restarts)\r\n\
    \x20 hosts                list the host ports the next start presents\r\n\
    \x20 host [<switch>:]<port> <slots>\r\n\
    \x20                      make a port a host port (next start); <switch>: another\r\n\
    \x20                      switch's ID in hex, as `hosts` lists it\r\n\
    \x20 host remove [<switch>:]<port>\r\n\
    \x20                      take a host port out (next start)\r\n\
    \x20 functions            list the fabric's functions and their bindings\r\n\
    \x20 bind <bb:dd.f> <host> <slot>\r\n\
    \x20                      bind a function to a host's slot\r\n\
    \x20 unbind <host> <slot> [graceful|managed|surprise]\r\n\
    \x20                      unbind a host's slot (graceful: once the host powers it off)\r\n";
