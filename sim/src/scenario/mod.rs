//! Scenarios: a fabric and a timeline of actions, described in a TOML file
//! and run on a [`World`](crate::world::World).
//!
//! - [`format`](mod@format): the file as written (`[scenario]`, `[defaults]`,
//!   `[fabric]`, `[[switch]]`, `[[host]]`, `[[endpoint]]`, `[[link]]`,
//!   `[[step]]`); unknown keys are errors.
//! - [`validate`]: names resolved and the fabric checked (a link to a port
//!   that does not exist, two links on one port, a step naming an unknown
//!   endpoint); every error names the line and column it is about.
//! - [`build`]: the [`World`](crate::world::World) a scenario describes.
//! - [`engine`]: runs the timeline and reports what each step showed.
//!
//! `[fabric] manager` picks the fabric manager on switch 0: `"native"`
//! (the default, weft-fabric run by the simulator), `"firmware-iss"`,
//! the firmware ELF on the instruction-set simulator
//! ([`crate::iss_manager`]), or `"firmware-rtl"`, the same ELF on the RTL
//! soft core ([`crate::rtl_board`], cycle by cycle: far slower), read
//! from `firmware = "path"` (relative to the file) or the workspace's
//! build. The firmware's flash is provisioned with the scenario's host
//! ports and NumVFs ([`crate::iss_manager::provisioned_flash`]); a
//! scenario then enumerates (the step reports the firmware's instructions
//! and cycles) and boots hosts only. Hosts attach to any switch: the
//! manager, native or firmware, reads other switches' mailboxes in-band
//! ([`crate::world`]).
//!
//! `[[switch]] data_plane = "rtl"` makes the RTL carry that switch's TLPs,
//! checked against the model ([`crate::rtl_plane`]), host ports included;
//! `"verilated"` does the same with the RTL's Verilog built by Verilator.
//!
//! Steps can break the fabric too: `hang` makes endpoints stop answering,
//! as devices whose firmware has crashed
//! ([`World::hang_device`](crate::world::World::hang_device)), and `read`
//! has a host's CPU read a function's first memory BAR, or with `space =
//! "config"` its Vendor ID, and checks the completion's status (`expect =
//! "successful"`, `"unsupported_request"` or `"completer_abort"`),
//! reporting how long it took. A host's read of a hung device is completed
//! by the switch with Completer Abort once the completion timeout the
//! fabric manager sets has passed (10 ms, PCIe Base 6.0 §2.8, §7.5.3.16),
//! well before the host's own 50 ms timeout
//! (`sim/tests/scenarios/hung_gpu.toml`); a configuration read of it, which
//! the manager forwards, by the manager after the same 10 ms wait
//! (`weft_fabric::virtualize::FORWARDED_TIMEOUT_NS`,
//! `sim/tests/scenarios/hung_gpu_config.toml`). A device hung before
//! `enumerate` never completes the fabric manager's first configuration
//! read: the manager waits its own completion timeout
//! ([`MANAGER_COMPLETION_TIMEOUT`](crate::manager_config::MANAGER_COMPLETION_TIMEOUT),
//! 50 ms), reports the device not responding (the `enumerate` step says
//! so) and enumerates the rest
//! (`sim/tests/scenarios/hung_before_enumeration.toml`). With
//! `after_config_requests = N` the endpoints of a `hang` step answer N
//! more configuration requests (reads and writes, the manager's or a
//! host's) and hang as the next one arrives
//! ([`World::hang_device_after`](crate::world::World::hang_device_after)):
//! a device that hangs partway through enumeration, which the manager
//! reports not responding all the same, releasing what it had given it
//! (`sim/tests/scenarios/hung_during_enumeration.toml`: an NVMe drive hung
//! while its SR-IOV is set up, whose bus and addresses the GPU on the
//! next port gets). `N` is 1 or more; a scenario with 0 or less, or more
//! than 2³² − 1, is refused. A device below a conventional switch hangs
//! alone, the switch forwarding to it what it would
//! ([`World::hang_nested_device`](crate::world::World::hang_nested_device)):
//! the manager leaves it out and keeps the switch and its other devices
//! (`sim/tests/scenarios/hung_below_pcie_switch.toml`).
//!
//! The reference experiment of shared/REFERENCE.md is the built-in
//! scenario [`REFERENCE`], shipped as `sim/scenarios/reference.toml`.
//!
//! A minimal scenario, one host using one GPU:
//!
//! ```toml
//! [scenario]
//! name = "one-gpu"
//! title = "a host and a GPU on one switch"
//!
//! [[switch]]
//! name = "s0"
//! id = 0x10
//! ports = 4
//!
//! [[host]]
//! name = "host1"
//! slots = 2
//!
//! [[endpoint]]
//! name = "gpu1"
//! kind = "gpu"
//!
//! [[link]]
//! ends = ["host1", "s0.0"]
//! [[link]]
//! ends = ["gpu1", "s0.1"]
//! generation = 4
//! width = 8
//!
//! [[step]]
//! do = "enumerate"
//! [[step]]
//! do = "bind"
//! endpoints = ["gpu1"]
//! host = "host1"
//! [[step]]
//! do = "boot"
//! hosts = ["host1"]
//! [[step]]
//! do = "sees"
//! host = "host1"
//! endpoints = ["gpu1"]
//! ```

pub mod build;
pub mod engine;
pub mod format;
pub mod validate;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

pub use validate::Scenario;

/// Vendor ID the virtual switch ports report unless `[fabric]` says
/// otherwise. weft has no PCI-SIG Vendor ID of its own; a board that ships
/// sets the one it owns.
pub const VIRTUAL_SWITCH_VENDOR: u16 = 0x1d1d;

/// The reference experiment (shared/REFERENCE.md), built in.
pub const REFERENCE: &str = include_str!("../../scenarios/reference.toml");

/// Where a scenario's text came from, for error messages.
pub const REFERENCE_ORIGIN: &str = "sim/scenarios/reference.toml (built in)";

/// Why a scenario could not be loaded.
#[derive(Debug)]
pub enum ScenarioError {
    /// The file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The text is not a valid scenario.
    Invalid {
        /// The file (or the built-in scenario's name).
        origin: String,
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// What is wrong, naming the key.
        message: String,
    },
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioError::Read { path, source } => {
                write!(f, "cannot read scenario {}: {source}", path.display())
            }
            ScenarioError::Invalid {
                origin,
                line,
                column,
                message,
            } => write!(f, "{origin}:{line}:{column}: {message}"),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Line and column (both from 1) of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, column)
}

impl Scenario {
    /// Parses and validates `text`; `origin` names it in errors and
    /// `base` is where files it names (device dumps) are looked up.
    pub fn parse(text: &str, origin: &str, base: &Path) -> Result<Scenario, ScenarioError> {
        let invalid = |offset: usize, message: String| {
            let (line, column) = line_column(text, offset);
            ScenarioError::Invalid {
                origin: origin.to_string(),
                line,
                column,
                message,
            }
        };
        let file: format::ScenarioFile = toml::from_str(text).map_err(|err| {
            let offset = err.span().map_or(0, |span| span.start);
            invalid(offset, err.message().trim_end().to_string())
        })?;
        validate::resolve(file, text, base).map_err(|err| invalid(err.offset, err.message))
    }

    /// Reads and validates the scenario file at `path`.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Scenario::parse(&text, &path.display().to_string(), base)
    }

    /// The built-in reference experiment.
    pub fn reference() -> Scenario {
        Scenario::parse(REFERENCE, REFERENCE_ORIGIN, Path::new("."))
            .expect("the built-in reference scenario is valid (tests/scenario.rs)")
    }

    /// The same scenario with `kind` carrying every switch's TLPs, whatever
    /// its file says (`--data-plane`).
    pub fn on_data_plane(&self, kind: format::DataPlaneKind) -> Scenario {
        let mut scenario = self.clone();
        for switch in &mut scenario.switches {
            switch.data_plane = kind;
        }
        scenario
    }
}
