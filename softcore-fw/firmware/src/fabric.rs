//! The fabric manager (`weft-fabric`) on the soft core, against the data
//! plane's CSR window: its tables through weft-regs' `CsrDataPlane`, its
//! configuration requests and the hosts' through one mailbox
//! (weft-drivers' `CsrMailbox`), its clock the machine timer. Other weft
//! switches' tables are written in-band (weft-fabric's `InbandFabric`):
//! memory requests to each switch's management BAR, sent through the same
//! injector, read completions awaited in the same mailbox.
//!
//! The manager is configured from the built-in settings ([`settings`]: this
//! switch, the fabric manager at bus 0, the host ports of [`HOST_PORTS`])
//! when the firmware starts, with the host ports and the NumVFs of the
//! configuration saved in flash ([`crate::flash::CONFIG_REGION`], by
//! `SaveConfig` or the console's `host` command) if there is one,
//! and started — enumeration, routes, tables —
//! by the main loop once the links have been out of reset for the 100 ms
//! the spec asks before the first configuration request (PCIe Base 6.0
//! §6.6.1; the links leave reset with the soft core, at `mtime` 0), so the
//! boot does not wait and the management port answers meanwhile; the
//! saved bindings are made again right after. On a board that reports
//! its ports' links, the main loop looks at them every [`LINK_LOOK`] until
//! the start, and the start also waits until every link it saw come up
//! has been up 100 ms (§6.6.1, for ports above 5.0 GT/s: weft-fabric's
//! `LinkSettling`), 1 s after reset at the latest. From
//! then on every pass of the main loop answers the hosts' configuration
//! requests waiting in the mailbox ([`Fabric::serve_hosts`]) before the
//! network is polled, and the management server's requests are answered
//! from the manager ([`Fabric::answer`]).
//!
//! The management API's topology shows each port's link as the board
//! reports it on the SoC's GPIO inputs (`weft_chip`'s `link_up`), or, on a
//! board that reports none, as up where enumeration found something. While
//! the fabric runs, each pass of the main loop (at least every
//! [`crate::CONSOLE_PERIOD`]) logs every link that went up or down since
//! the last one in the event log, and the main loop says it on the
//! console ([`Fabric::log_link_changes`]): a link up on a port the start
//! found nothing on is not enumerated (there is no hot-add), and its line
//! says the firmware's restart enumerates it.
//!
//! Hosts on other weft switches put their configuration requests into
//! those switches' mailboxes, which raise no interrupt here: while the
//! fabric runs with such host ports, the main loop wakes every
//! [`REMOTE_MAILBOX_POLL_NS`] and [`Fabric::serve_hosts`] reads each of
//! those mailboxes in-band (weft-drivers' `FabricHosts`), answering
//! through that switch's injector.
//!
//! Once the fabric runs, the data plane raises the machine external
//! interrupt while a TLP waits in the mailbox or the injector has dropped
//! one (weft-drivers' `CsrMailbox::set_interrupts`), so the main loop
//! sleeps in `wfi` until a host asks rather than looking at the mailbox
//! every millisecond: [`Fabric::next_wake`] asks for no timer alarm while
//! it runs. The line is level-sensitive and [`Fabric::serve_hosts`] lowers
//! it, emptying the mailbox and acknowledging the injector's drops. Before
//! the start (and after a failed one) the interrupt stays off: nothing
//! would empty the mailbox, and its line would end every `wfi` at once.

use core::cell::RefCell;

use smoltcp::time::Duration;
use weft_drivers::hosts::{FabricHosts, REMOTE_MAILBOX_POLL_NS};
use weft_drivers::mailbox::{CsrMailbox, InjectDrops, SharedMailbox};
use weft_drivers::timer::SocTimer;
use weft_fabric::binding::BindError;
use weft_fabric::board::Board;
use weft_fabric::firmware_update::FirmwareService;
use weft_fabric::hw::Timer;
use weft_fabric::inband::InbandFabric;
use weft_fabric::inventory::{Function, PortKind, SwitchIndex};
use weft_fabric::limits::MAX_HOST_PORTS;
use weft_fabric::management::{
    advance_operations, handle, BoardInfo, Hardware, PortLink, PortLinks,
};
use weft_fabric::manager::{FabricManager, StartError};
use weft_fabric::pcie::config::function::CLASS_PCI_BRIDGE;
use weft_fabric::pcie::config::FunctionIdentity;
use weft_fabric::pcie::Bdf;
use weft_fabric::persist::{self, PersistError, Restored, StoredConfig};
use weft_fabric::readiness::LinkSettling;
use weft_fabric::settings::{
    remove_host_port, set_host_port, FabricSettings, HostPort, HostPortError,
};
use weft_proto::heapless::Vec;
use weft_proto::{LinkSpeed, LinkState, LinkStatus, Request, Response};
use weft_regs::driver::{CsrDataPlane, IdentityError};
use weft_regs::soc::gpio;
use weft_regs::tables::{DataPlane, HostIndex, PortIndex};

use crate::board::SocBoard;
use crate::console::HostEdit;
use crate::links;
use crate::mmio::Mmio;

/// The host ports the manager presents virtual switches on unless the
/// saved configuration names others: host 0's root port on port 0, with
/// four slots.
pub const HOST_PORTS: [(PortIndex, HostIndex, u8); 1] = [(PortIndex(0), HostIndex(0), 4)];

/// The vendor ID of the virtual switch ports (the simulator's default, so
/// a host sees the same bridges on both).
pub const VIRTUAL_SWITCH_VENDOR: u16 = 0x1d1d;

/// The manager's own fabric ID: bus 0, as weft-fabric's default.
const MANAGER_ID: Bdf = Bdf::new(0, 0, 0);

/// The manager's settings for the switch `switch_id`.
pub fn settings(switch_id: u64) -> FabricSettings {
    let bridge = |device_id| FunctionIdentity {
        vendor_id: VIRTUAL_SWITCH_VENDOR,
        device_id,
        revision_id: 0,
        class_code: CLASS_PCI_BRIDGE,
    };
    let mut settings = FabricSettings {
        switch_id,
        manager_id: MANAGER_ID,
        upstream_identity: bridge(1),
        downstream_identity: bridge(2),
        ..FabricSettings::DEFAULT
    };
    for (port, host, slots) in HOST_PORTS {
        // HOST_PORTS is shorter than the manager's host capacity.
        let _ = settings.hosts.push(HostPort {
            switch: switch_id,
            port,
            host,
            slots,
        });
    }
    settings
}

/// Why the host ports for the next start could not be read or changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostsError {
    /// The board has no configuration flash.
    NoFlash,
    /// The configuration flash failed.
    Flash(PersistError),
    /// The switch has no such port.
    NoSuchPort {
        /// The port asked for.
        port: u8,
        /// Ports the switch has.
        ports: usize,
    },
    /// The fabric's last start found no switch with this switch ID.
    NoSuchSwitch(u64),
    /// The slots or the number of host ports are out of range.
    Set(HostPortError),
    /// The port to take out is no host port.
    NotAHostPort {
        /// The port.
        port: u8,
    },
}

/// Where the fabric is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Configured; waiting for the links' reset to be 100 ms past, and
    /// the links seen up to have been up 100 ms.
    Waiting,
    /// Enumerated; hosts are answered.
    Running,
    /// Start-up failed; hosts get no answer, the management server says not ready.
    Failed(StartError),
}

/// The ports whose links went up or down since the last look, one bit each,
/// for the console.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkChanges {
    /// Up, on a port the start found something on (or a host's).
    pub up: u32,
    /// Up, on a port the start found nothing on: what is there is not
    /// enumerated until the fabric starts again.
    pub up_unenumerated: u32,
    /// Down.
    pub down: u32,
}

/// What a start of the fabric did, for the console.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    /// How it ended.
    pub result: Result<(), StartError>,
    /// Functions enumerated.
    pub functions: usize,
    /// What restoring the bindings saved in flash did, if a configuration was saved.
    pub restored: Option<Result<Restored, BindError>>,
    /// Instructions the start retired (`minstret`).
    pub instructions: u32,
    /// `mtime` ticks (soft core cycles) it took.
    pub cycles: u32,
}

/// The mailbox both the manager's configuration requests and the hosts' use.
type Mailbox = CsrMailbox<Mmio, SocTimer<Mmio>>;

/// Every host port's interface: this switch's mailbox, and those of the
/// other switches with host ports, read in-band through it.
type Hosts<'a> = FabricHosts<
    SharedMailbox<'a, Mmio, SocTimer<Mmio>>,
    SharedMailbox<'a, Mmio, SocTimer<Mmio>>,
    SocTimer<Mmio>,
>;

/// How often the main loop looks at a NumVFs change that waits for its
/// VFs: their readiness raises no interrupt.
const OPERATION_POLL: Duration = Duration::from_millis(10);

/// How often the main loop looks at the ports' links while the start waits
/// for them: a link is given its 100 ms from the look that first saw it up,
/// so at most this much more than the spec asks.
pub const LINK_LOOK: Duration = Duration::from_millis(5);

/// The fabric manager and its hardware.
pub struct Fabric {
    manager: &'static mut FabricManager,
    plane: CsrDataPlane<Mmio>,
    mailbox: RefCell<Mailbox>,
    board: SocBoard,
    phase: Phase,
    /// The ports' links as the last pass saw them ([`links::up`]), to log
    /// each change; `None` before the first look, or where no board
    /// reports them.
    links_seen: Option<u32>,
    /// The links the start has seen come up, and when ([`LINK_LOOK`]).
    settling: LinkSettling,
}

impl Fabric {
    /// The manager in `home`, configured for switch `switch_id` over the
    /// CSR window, if a weft data plane of this register map answers there.
    pub fn new(home: &'static mut FabricManager, switch_id: u64) -> Result<Self, IdentityError> {
        let plane = CsrDataPlane::new(Mmio)?;
        // The built-in settings have fewer slots than a virtual switch holds.
        let _ = home.configure(settings(switch_id));
        let mut mailbox = CsrMailbox::new(Mmio, SocTimer::new(Mmio), switch_id, MANAGER_ID)
            .with_link_state(gpio::INPUT.address(0, 0));
        // The first look at the links, as early as the firmware can: a link
        // up already is given its 100 ms from here.
        let mut settling = LinkSettling::NEW;
        if let Some(up) = links::up() {
            settling.observe(mailbox.timer().now_ns(), up);
        }
        Ok(Fabric {
            manager: home,
            plane,
            mailbox: RefCell::new(mailbox),
            board: SocBoard::new(),
            phase: Phase::Waiting,
            links_seen: None,
            settling,
        })
    }

    /// Where the fabric is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Ports of the switch.
    pub fn ports(&self) -> usize {
        self.plane.ports()
    }

    /// How long the main loop may sleep before the fabric needs it: until
    /// the start; while it runs, not at all if hosts' requests are held
    /// outside the mailbox (they raise no interrupt), else until the data
    /// plane interrupts (`None`: no alarm needed).
    pub fn next_wake(&mut self) -> Option<Duration> {
        match self.phase {
            Phase::Waiting => {
                let now = self.mailbox.borrow_mut().timer().now_ns();
                let left_ns = self.settling.start_at_ns(0).saturating_sub(now);
                let left = Duration::from_micros(left_ns.div_ceil(1_000));
                Some(match links::up() {
                    Some(_) => left.min(LINK_LOOK),
                    None => left,
                })
            }
            Phase::Running if self.mailbox.borrow().holds_requests() => Some(Duration::ZERO),
            Phase::Running if self.has_remote_hosts() => {
                Some(Duration::from_micros(REMOTE_MAILBOX_POLL_NS / 1_000))
            }
            Phase::Running if self.manager.num_vfs_operation().is_some() => Some(OPERATION_POLL),
            Phase::Running | Phase::Failed(_) => None,
        }
    }

    /// Starts the fabric if it waits and its time has come: 100 ms after
    /// the links' reset, and after every link seen up has been up 100 ms.
    pub fn start_when_due(&mut self) -> Option<Started> {
        if self.phase != Phase::Waiting {
            return None;
        }
        let now = self.mailbox.borrow_mut().timer().now_ns();
        if let Some(up) = links::up() {
            self.settling.observe(now, up);
        }
        if now < self.settling.start_at_ns(0) {
            return None;
        }
        let (instructions, ticks) = (minstret(), crate::timer::ticks());
        // The configuration saved by `SaveConfig` is applied at start: its
        // NumVFs before enumeration, its bindings after.
        let saved = self.configure_saved();
        let result = self.enumerate();
        let restored = match (&result, &saved) {
            (Ok(()), Some(saved)) => {
                let config = SharedMailbox(&self.mailbox);
                let mut hosts = hosts(self.manager, &self.mailbox);
                let mut fabric = InbandFabric::new(&mut self.plane, config);
                Some(self.manager.restore(saved, &mut fabric, &mut hosts))
            }
            _ => None,
        };
        let started = Started {
            result,
            functions: self.manager.inventory().functions.len(),
            restored,
            instructions: minstret().wrapping_sub(instructions),
            cycles: crate::timer::ticks().wrapping_sub(ticks) as u32,
        };
        self.phase = match result {
            Ok(()) => Phase::Running,
            Err(error) => Phase::Failed(error),
        };
        // From now on the mailbox is served, so its interrupt may wake the loop.
        self.mailbox
            .borrow_mut()
            .set_interrupts(self.phase == Phase::Running);
        Some(started)
    }

    /// The configuration saved in flash, if there is one, with its NumVFs
    /// put in the manager's settings.
    ///
    /// Kept out of line, as is [`Fabric::enumerate`]: each needs a deep
    /// stack (the virtual switches built here, the inventory there), and
    /// inlined they would take both at once from the soft core's data RAM
    /// for the whole of the main loop.
    #[inline(never)]
    fn configure_saved(&mut self) -> Option<StoredConfig> {
        let saved = persist::load(self.board.config_flash()?).ok().flatten()?;
        let mut settings = settings(self.manager.settings().switch_id);
        saved.apply_to(&mut settings);
        // The built-in settings have fewer slots than a virtual switch holds.
        let _ = self.manager.configure(settings);
        Some(saved)
    }

    /// The host ports the next start presents virtual switches on: those
    /// of the configuration saved in flash, or else the running ones.
    pub fn next_hosts(&mut self) -> Result<Vec<HostPort, MAX_HOST_PORTS>, HostsError> {
        Ok(self.next_config()?.hosts.unwrap_or_default())
    }

    /// Makes `edit` to the host ports the next start presents, and stores
    /// them in the saved configuration (created from the running NumVFs,
    /// without bindings, if none is saved); returns them. A port to set
    /// must be one of this switch's, or of another switch the fabric's
    /// last start found.
    pub fn edit_hosts(
        &mut self,
        edit: HostEdit,
    ) -> Result<Vec<HostPort, MAX_HOST_PORTS>, HostsError> {
        let own = self.manager.settings().switch_id;
        let mut config = self.next_config()?;
        let mut hosts = config.hosts.take().unwrap_or_default();
        match edit {
            HostEdit::Set { port: at, slots } => {
                let switch = at.switch.unwrap_or(own);
                let ports = if switch == own {
                    self.ports()
                } else {
                    let inventory = self.manager.inventory();
                    let found = inventory
                        .switch_index(switch)
                        .ok_or(HostsError::NoSuchSwitch(switch))?;
                    usize::from(inventory.switches[usize::from(found.0)].port_count)
                };
                if usize::from(at.port) >= ports {
                    return Err(HostsError::NoSuchPort {
                        port: at.port,
                        ports,
                    });
                }
                set_host_port(&mut hosts, switch, PortIndex(at.port), slots)
                    .map_err(HostsError::Set)?;
            }
            HostEdit::Remove { port: at } => {
                let switch = at.switch.unwrap_or(own);
                if !remove_host_port(&mut hosts, switch, PortIndex(at.port)) {
                    return Err(HostsError::NotAHostPort { port: at.port });
                }
            }
        }
        config.hosts = Some(hosts.clone());
        let flash = self.board.config_flash().ok_or(HostsError::NoFlash)?;
        persist::save(flash, &config).map_err(HostsError::Flash)?;
        Ok(hosts)
    }

    /// The configuration the next start applies: the saved one (with the
    /// running host ports if it is older than host ports in records), or
    /// the running NumVFs and host ports.
    fn next_config(&mut self) -> Result<StoredConfig, HostsError> {
        let flash = self.board.config_flash().ok_or(HostsError::NoFlash)?;
        let saved = persist::load(flash).map_err(HostsError::Flash)?;
        let settings = self.manager.settings();
        Ok(match saved {
            Some(saved) => StoredConfig {
                hosts: saved.hosts.clone().or_else(|| Some(settings.hosts.clone())),
                ..saved
            },
            None => StoredConfig::of_settings(settings),
        })
    }

    /// Enumerates the fabric and programs its tables.
    #[inline(never)]
    fn enumerate(&mut self) -> Result<(), StartError> {
        let mut config = SharedMailbox(&self.mailbox);
        let mut timer = SocTimer::new(Mmio);
        let mut fabric = InbandFabric::new(&mut self.plane, config);
        self.manager.start(&mut config, &mut timer, &mut fabric, 0)
    }

    /// Answers every host configuration request waiting in the mailbox
    /// through the manager's configuration virtualization, and
    /// acknowledges the injector's drops: the data plane's interrupt is
    /// lowered, unless a TLP arrived meanwhile. Returns the drops, which
    /// mean a TLP the firmware built was refused (a bug worth reporting).
    pub fn serve_hosts(&mut self) -> Option<InjectDrops> {
        if self.phase != Phase::Running {
            return None;
        }
        self.tell_time();
        let mut config = SharedMailbox(&self.mailbox);
        let mut hosts = hosts(self.manager, &self.mailbox);
        // A request whose table writes failed was completed with Completer
        // Abort, which tells its host; the next pass serves the rest.
        let mut fabric = InbandFabric::new(&mut self.plane, config);
        let _ = self.manager.service(&mut config, &mut fabric, &mut hosts);
        // A NumVFs change's VFs join the inventory once they answer,
        // whether or not a client polls the operation.
        let _ = advance_operations(self.manager, &mut config);
        self.mailbox.borrow_mut().acknowledge_drops()
    }

    /// Every function the fabric manager found, in enumeration order, with
    /// its binding.
    pub fn functions(&self) -> &[Function] {
        &self.manager.inventory().functions
    }

    /// The answer to a management request, from the manager, with the
    /// firmware update requests served by `firmware`.
    pub fn answer(
        &mut self,
        board: &BoardInfo,
        request: &Request,
        trailing: &[u8],
        firmware: Option<&mut dyn FirmwareService>,
    ) -> Response {
        self.tell_time();
        let mut config = SharedMailbox(&self.mailbox);
        let mut hosts = hosts(self.manager, &self.mailbox);
        let mut links = LocalLinks {
            switch_id: self.manager.settings().switch_id,
            up: links::up().unwrap_or_else(|| found_ports(self.manager)),
        };
        let mut fabric = InbandFabric::new(&mut self.plane, config);
        let mut timer = SocTimer::new(Mmio);
        let hardware = Hardware {
            config: &mut config,
            fabric: &mut fabric,
            hosts: &mut hosts,
            links: &mut links,
            // A hot reset waits its 100 ms here (weft_fabric::link_control).
            timer: Some(&mut timer),
            // Re-borrowed for as long as the request's other hardware.
            firmware: match firmware {
                Some(firmware) => Some(firmware),
                None => None,
            },
            board: &mut self.board,
        };
        handle(self.manager, board, request, trailing, hardware)
    }

    /// Whether a host port of the configuration is on another switch.
    fn has_remote_hosts(&self) -> bool {
        let settings = self.manager.settings();
        settings
            .hosts
            .iter()
            .any(|h| h.switch != settings.switch_id)
    }

    /// Logs each port whose link the board shows up or down differently
    /// from the last pass (the event log's link events), once the fabric
    /// runs, and returns the changes for the console; the links as the
    /// first look finds them are not logged.
    pub fn log_link_changes(&mut self) -> LinkChanges {
        let mut changes = LinkChanges::default();
        let Some(up) = links::up() else {
            return changes;
        };
        if self.phase != Phase::Running {
            return changes;
        }
        self.tell_time();
        let changed = self.links_seen.replace(up).map_or(0, |seen| seen ^ up);
        for port in 0..self.ports().min(31) {
            if changed >> port & 1 == 0 {
                continue;
            }
            let index = PortIndex(port as u8);
            let is_up = up >> port & 1 == 1;
            let _ = self.manager.record_link(SwitchIndex::LOCAL, index, is_up);
            let found_nothing =
                self.manager.inventory().port_on(SwitchIndex::LOCAL, index) == PortKind::Empty;
            let mask = match (is_up, found_nothing) {
                (true, true) => &mut changes.up_unenumerated,
                (true, false) => &mut changes.up,
                (false, _) => &mut changes.down,
            };
            *mask |= 1 << port;
        }
        changes
    }

    /// Gives the manager's event log the time, since the firmware started.
    fn tell_time(&mut self) {
        let now_ns = self.mailbox.borrow_mut().timer().now_ns();
        self.manager.set_time(now_ns);
    }
}

/// The interface of every host port of `manager`'s configuration: this
/// switch's through `mailbox`, and the other switches' that discovery
/// reached, in-band through it.
fn hosts<'a>(manager: &FabricManager, mailbox: &'a RefCell<Mailbox>) -> Hosts<'a> {
    FabricHosts::of_manager(
        manager,
        SharedMailbox(mailbox),
        || SharedMailbox(mailbox),
        || SocTimer::new(Mmio),
    )
}

/// The ports' links: a port of this switch is up as the board reports it
/// ([`links::up`]), or, where nothing reports links, when enumeration found
/// something on it (a host, an endpoint, another switch); its speed and
/// width are unknown. Another switch's ports are reported down.
struct LocalLinks {
    switch_id: u64,
    /// Bit n: port n's link is up.
    up: u32,
}

impl PortLinks for LocalLinks {
    fn link(&mut self, switch_id: u64, port: u8) -> PortLink {
        let up = switch_id == self.switch_id && port < 32 && self.up >> port & 1 == 1;
        PortLink {
            status: LinkStatus {
                state: if up { LinkState::Up } else { LinkState::Down },
                speed: None,
                width: 0,
            },
            max_speed: LinkSpeed::Gen3,
            max_width: 16,
        }
    }
}

/// The ports of the manager's own switch where enumeration found a link partner.
fn found_ports(manager: &FabricManager) -> u32 {
    let Some(local) = manager.inventory().switches.first() else {
        return 0;
    };
    (0..local.port_count.min(32))
        .filter(|&port| local.port(PortIndex(port)) != PortKind::Empty)
        .fold(0, |found, port| found | 1 << port)
}

/// Instructions retired since reset, low half (Privileged 20211203 §3.1.10).
fn minstret() -> u32 {
    riscv::register::minstret::read() as u32
}
