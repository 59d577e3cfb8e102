//! The command line: global options and one subcommand per management
//! request.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use weft_proto::{FabricId, MANAGEMENT_UDP_PORT};

use weftctl::parse;

/// Manage a weft PCIe fabric switch over Ethernet.
///
/// The key comes from --key, --key-file, the WEFT_KEY variable (the digits)
/// or WEFT_KEY_FILE (a file holding them); --insecure talks to a switch that
/// runs with the publicly known key. Exit codes: 0 success, 1 a failure on
/// this machine, 2 a usage or configuration error, 3 the switch refused or
/// failed the request, 4 the switch did not answer.
#[derive(Debug, Parser)]
#[command(name = "weftctl", version, about, long_about)]
pub struct Cli {
    /// The switch's management address, host[:port].
    #[arg(
        long,
        visible_alias = "target",
        env = "WEFT_TARGET",
        global = true,
        default_value_t = SocketAddr::from(([127, 0, 0, 1], MANAGEMENT_UDP_PORT)),
        value_parser = parse::switch_addr,
    )]
    pub switch: SocketAddr,

    /// The switch's identity (as `identify` prints it); without it, weftctl
    /// asks whichever switch answers at the address.
    #[arg(long, global = true, value_parser = parse::number)]
    pub switch_id: Option<u64>,

    /// The switch's key: 64 hexadecimal digits. A key file keeps it out of
    /// the process list.
    #[arg(long, global = true, value_name = "HEX", conflicts_with_all = ["key_file", "insecure"])]
    pub key: Option<String>,

    /// A file holding the switch's key as 64 hexadecimal digits.
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "insecure")]
    pub key_file: Option<PathBuf>,

    /// Use the publicly known key, for a switch running in insecure mode.
    #[arg(long, global = true)]
    pub insecure: bool,

    /// Print the switch's answer as JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    /// How long one try waits for an answer, in milliseconds.
    #[arg(long, global = true, default_value_t = 500, value_name = "MS")]
    pub timeout_ms: u64,

    /// How many times an unanswered request is sent again.
    #[arg(long, global = true, default_value_t = 3)]
    pub retries: u32,

    /// How long to follow a background operation, in milliseconds.
    #[arg(long, global = true, default_value_t = 60_000, value_name = "MS")]
    pub op_timeout_ms: u64,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// A management command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check that the switch answers and print the round-trip time.
    Ping {
        /// How many pings to send.
        #[arg(short, long, default_value_t = 1)]
        count: u32,
    },
    /// Show the switch's identity, firmware, board and capabilities.
    Identify,
    /// Show the fabric: switches, links, ports and functions.
    Topology {
        /// Tables for people, or a Graphviz graph.
        #[arg(long, value_enum, default_value_t = TopologyFormat::Table)]
        format: TopologyFormat,
    },
    /// Show one host's virtual switch: its slots and what is bound.
    Vswitch {
        /// The host.
        #[arg(value_parser = parse::bounded::<u8>)]
        host: u8,
    },
    /// Bind functions (one device, function 0 first) to a host's slot.
    Bind {
        /// The host.
        #[arg(value_parser = parse::bounded::<u8>)]
        host: u8,
        /// The slot of the host's virtual switch.
        #[arg(value_parser = parse::bounded::<u8>)]
        slot: u8,
        /// Up to 8 fabric IDs, as `bb:dd.f` or hex.
        #[arg(required = true, num_args = 1..=8, value_parser = parse::fabric_id)]
        functions: Vec<FabricId>,
        #[command(flatten)]
        precondition: Precondition,
    },
    /// Unbind whatever is bound to a host's slot; by default wait until the
    /// host powers the slot off, polling the switch's operation.
    Unbind {
        /// The host.
        #[arg(value_parser = parse::bounded::<u8>)]
        host: u8,
        /// The slot.
        #[arg(value_parser = parse::bounded::<u8>)]
        slot: u8,
        /// How the host gives the device up.
        #[arg(long, value_enum, default_value_t = UnbindModeArg::Graceful)]
        mode: UnbindModeArg,
        #[command(flatten)]
        precondition: Precondition,
    },
    /// Set the number of SR-IOV virtual functions of a physical function.
    SetVfs {
        /// The physical function, as `bb:dd.f` or hex.
        #[arg(value_parser = parse::fabric_id)]
        pf: FabricId,
        /// The number of VFs (0 disables SR-IOV).
        #[arg(value_parser = parse::bounded::<u16>)]
        count: u16,
    },
    /// Act on a physical port.
    Port {
        /// The port.
        #[arg(value_parser = parse::bounded::<u8>)]
        port: u8,
        /// What to do.
        #[arg(value_enum)]
        action: PortActionArg,
    },
    /// Show a port's counters.
    Counters {
        /// The port.
        #[arg(value_parser = parse::bounded::<u8>)]
        port: u8,
        /// Clear the port's counters after reading them.
        #[arg(long)]
        clear: bool,
    },
    /// Show live per-port throughput, one table per interval.
    Watch {
        /// The ports to watch (every port of the switch if none is given).
        #[arg(value_parser = parse::bounded::<u8>)]
        ports: Vec<u8>,
        /// The time between readings, in milliseconds.
        #[arg(long, default_value_t = 1000, value_name = "MS")]
        interval_ms: u64,
        /// Stop after this many tables (by default, run until interrupted).
        #[arg(long)]
        count: Option<u32>,
    },
    /// Show the event log.
    Events {
        /// The first sequence number wanted (0: the oldest kept).
        #[arg(long, default_value_t = 0, value_parser = parse::number)]
        from: u64,
        /// Keep reading new events until interrupted.
        #[arg(long)]
        follow: bool,
        /// With --follow, how long to wait between reads, in milliseconds.
        #[arg(long, default_value_t = 1000, value_name = "MS")]
        interval_ms: u64,
    },
    /// Save or restore the switch's configuration in flash.
    Config {
        /// Save or restore.
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Update the switch's firmware, or see where an update stands.
    #[command(visible_alias = "fw")]
    Firmware {
        /// What to do.
        #[command(subcommand)]
        action: FirmwareAction,
    },
    /// Reset the switch's firmware (the data plane keeps forwarding) or the
    /// whole switch.
    Reset {
        /// What to reset.
        #[arg(long, value_enum, default_value_t = ResetScopeArg::Firmware)]
        scope: ResetScopeArg,
    },
    /// Read or write a CSR (diagnostics; bypasses the fabric manager).
    Csr {
        /// Read or write.
        #[command(subcommand)]
        action: CsrAction,
    },
    /// Read or write a function's config space (diagnostics).
    Cfg {
        /// Read or write.
        #[command(subcommand)]
        action: CfgAction,
    },
    /// Show where a background operation stands.
    OpStatus {
        /// The operation's number.
        #[arg(value_parser = parse::bounded::<u32>)]
        id: u32,
        /// Follow it until it ends.
        #[arg(long)]
        wait: bool,
    },
}

/// A precondition on the fabric's state.
#[derive(Debug, Args)]
pub struct Precondition {
    /// Refuse unless the fabric is still at this generation (as `vswitch`
    /// or `topology` printed it).
    #[arg(long, value_name = "N", value_parser = parse::bounded::<u32>)]
    pub if_generation: Option<u32>,
}

/// How `topology` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TopologyFormat {
    /// Aligned tables.
    Table,
    /// A Graphviz graph (`dot -Tsvg`).
    Dot,
}

/// How `unbind` takes a device from its host (PCIe Base 6.0 §6.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UnbindModeArg {
    /// Wait until an operator on the host powers the slot off, then unbind.
    Graceful,
    /// Press the slot's attention button: the host's hot-plug driver
    /// releases the device and powers the slot off (after its 5 s abort
    /// window), then unbind.
    Managed,
    /// Unbind now (surprise hot-remove); also ends a graceful or managed
    /// unbind the host does not answer.
    Surprise,
}

/// What `port` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PortActionArg {
    /// Allow the link to train.
    Enable,
    /// Hold the link down.
    Disable,
    /// Send a hot reset to the link partner.
    HotReset,
    /// Retrain the link.
    Retrain,
}

/// What `reset` resets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ResetScopeArg {
    /// Restart the firmware only.
    Firmware,
    /// Restart the firmware and reset the data plane (every link drops).
    Switch,
}

/// The width of a config-space access, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WidthArg {
    /// One byte.
    #[value(name = "1")]
    Byte,
    /// Two bytes.
    #[value(name = "2")]
    Word,
    /// Four bytes.
    #[value(name = "4")]
    Dword,
}

/// `config` subcommands.
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Save bindings, NumVFs and port settings to flash.
    Save,
    /// Apply the configuration saved in flash now.
    Restore,
}

/// `firmware` subcommands.
#[derive(Debug, Subcommand)]
pub enum FirmwareAction {
    /// Send an image, verify it and commit it (the switch boots it on trial
    /// and falls back to the running image if it does not check in).
    Update {
        /// The image file: weft-firmware.img, which `cargo xtask firmware` writes
        /// next to the firmware's ELF.
        image: PathBuf,
        /// Continue an interrupted transfer of the same image.
        #[arg(long)]
        resume: bool,
        /// Stop once the image is verified; commit later with
        /// `firmware commit`.
        #[arg(long)]
        no_commit: bool,
    },
    /// Show the partitions and where an update stands.
    Status,
    /// Commit an image that was sent with --no-commit.
    Commit,
    /// Abandon an update; the running image was never touched.
    Abort,
}

/// `csr` subcommands.
#[derive(Debug, Subcommand)]
pub enum CsrAction {
    /// Read a CSR.
    Read {
        /// Its byte address, aligned to 4.
        #[arg(value_parser = parse::bounded::<u32>)]
        addr: u32,
    },
    /// Write a CSR.
    Write {
        /// Its byte address, aligned to 4.
        #[arg(value_parser = parse::bounded::<u32>)]
        addr: u32,
        /// The value.
        #[arg(value_parser = parse::bounded::<u32>)]
        value: u32,
    },
}

/// `cfg` subcommands.
#[derive(Debug, Subcommand)]
pub enum CfgAction {
    /// Read config space.
    Read {
        /// The function, as `bb:dd.f` or hex.
        #[arg(value_parser = parse::fabric_id)]
        function: FabricId,
        /// The byte offset.
        #[arg(value_parser = parse::bounded::<u16>)]
        offset: u16,
        /// The access width in bytes: 1, 2 or 4.
        #[arg(long, value_enum, default_value = "4")]
        width: WidthArg,
    },
    /// Write config space.
    Write {
        /// The function, as `bb:dd.f` or hex.
        #[arg(value_parser = parse::fabric_id)]
        function: FabricId,
        /// The byte offset.
        #[arg(value_parser = parse::bounded::<u16>)]
        offset: u16,
        /// The value.
        #[arg(value_parser = parse::bounded::<u32>)]
        value: u32,
        /// The access width in bytes: 1, 2 or 4.
        #[arg(long, value_enum, default_value = "4")]
        width: WidthArg,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bind_takes_lspci_ids_and_options_after_the_subcommand() {
        let cli = Cli::try_parse_from([
            "weftctl",
            "bind",
            "1",
            "0",
            "03:00.0",
            "0x0301",
            "--switch",
            "127.0.0.1:9",
            "--json",
        ])
        .expect("valid");
        assert!(cli.json);
        assert_eq!(cli.switch, SocketAddr::from(([127, 0, 0, 1], 9)));
        match cli.command {
            Command::Bind {
                host,
                slot,
                functions,
                ..
            } => {
                assert_eq!((host, slot), (1, 0));
                assert_eq!(functions, vec![FabricId(0x0300), FabricId(0x0301)]);
            }
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn a_bind_takes_at_most_eight_functions() {
        let mut args = vec!["weftctl", "bind", "1", "0"];
        args.extend(["03:00.0"; 9]);
        assert!(Cli::try_parse_from(args).is_err());
    }
}
