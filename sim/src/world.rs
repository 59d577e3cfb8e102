//! A weft fabric — one or more weft switches with their hosts, endpoints,
//! fabric links and fabric manager — in simulated time.
//!
//! Every node — a host's root port, an endpoint, a switch port — exchanges
//! wire TLPs over [`link`](crate::link) models, one per direction of every
//! link ([`wiring`](crate::wiring)), so bandwidth, latency and ordering come
//! from the links. Every link runs credit-based flow control (PCIe Base 6.0
//! §2.6.1): switch ports and nodes advertise finite credits
//! ([`Credits::SWITCH_PORT`], [`Credits::ENDPOINT`]), a TLP without credits
//! waits in order on its link, and a receiver frees its credits when it
//! takes the TLP in ([`World::set_receiver_credits`] makes one slower). Switches are cabled to each other by fabric links, Gen3
//! x16 like the others unless built otherwise. Each switch is weft-model's
//! transaction-level switch, adding a fixed traversal latency, with the
//! management function its ports present to their links
//! ([`switch`](crate::switch)).
//!
//! The management CPU sits on switch 0 and runs the fabric manager
//! natively. Hosts and endpoints attach to any switch. The manager answers
//! host configuration requests from switch 0's mailbox as they arrive, and
//! from another switch's mailbox in-band, as the firmware would
//! (`weft_drivers::hosts`): it looks at those mailboxes every
//! [`REMOTE_MAILBOX_POLL`], reads each waiting request with register reads
//! through that switch's management BAR and answers through that switch's
//! injector, each access a memory request carried through the switch and
//! link models (polls that find nothing are not simulated). The manager reaches
//! endpoint configuration space with configuration TLPs carried through
//! the switch and link models ([`manager_config`](crate::manager_config)),
//! and every switch's tables through [`Planes`]: its own directly, the
//! others' in-band through their management BARs ([`crate::planes`]).
//!
//! Or the firmware ELF, on the instruction-set simulator or on the RTL
//! soft core ([`FirmwareCore`]), is switch 0's management CPU
//! ([`World::hand_manager_to_firmware`], [`crate::iss_manager`]): it runs
//! in the world's event loop, its configuration and in-band requests go
//! the native manager's way, and host configuration requests reach its
//! own mailbox or, from other switches' hosts, theirs, which it polls
//! in-band. The native manager then
//! has no part in the world, and [`World::manager`],
//! [`World::start_manager`] and [`World::with_manager`] are not for it.
//!
//! A host's software runs synchronously: while one host's CPU waits for an
//! answer, [`World`] advances every other node event by event
//! ([`HostLink`] is the host's view of everything past its root port).
//!
//! Each switch's clock is simulated time: it reads a TLP's arrival before
//! it forwards the TLP, so a host's request is stamped when it arrived,
//! and the world wakes a switch when its oldest request in flight reaches
//! the completion timeout (PCIe Base 6.0 §2.8), even if nothing else
//! happens then: the switch's Completer Abort leaves the host's port
//! that timeout after the request arrived, over the link like any TLP.
//! A request an endpoint never answers ([`World::hang_device`]) is
//! answered so before the host's own, longer timeout.
//!
//! [`World::record_waveform`] records what chosen switches' ports carry,
//! as the links send it, into a Value Change Dump ([`crate::waveform`]).

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::time::Duration;

use crate::rtl_plane::{RtlError, RtlSimulator};
use weft_devices::hang::HangControl;
use weft_devices::Device;
use weft_drivers::hosts::{FabricHosts, REMOTE_MAILBOX_POLL_NS};
use weft_fabric::hw::{FabricConfig, HostConfigRequest, HostInterface, HostSendError, Timer};
use weft_fabric::manager::FabricManager;
use weft_model::{Delivery, Destination, Packet, PortIndex, Switch};
use weft_pcie::config::msi::MsiMessage;
use weft_pcie::config::vsec::PortRole as VsecRole;
use weft_pcie::tlp::{Body, Completion, FlowControlClass, Header};
use weft_pcie::Bdf;

use crate::firmware_board::FirmwareCore;
use crate::host::{Fabric, Host};
use crate::iss_board::{BoardError, IssBoard};
use crate::iss_manager::FirmwareCpu;
use crate::link::LinkConfig;
use crate::link::{CreditCost, Credits, DATA_CREDIT_BYTES};
use crate::link_control::carry_link_requests;
use crate::manager_config::{ManagerConfig, SharedConfig};
use crate::planes::{lend, Planes};
use crate::switch::WeftSwitch;
use crate::waveform::{Waveform, WaveformError};
use crate::wiring::{ChannelId, End, Node, Place, Way, Wiring};

pub use crate::switch::SWITCH_LATENCY;

/// How long the management CPU takes to answer a configuration request
/// from its mailbox, when the native fabric manager stands in for the
/// firmware: what the real firmware took on the instruction-set simulator
/// at `weft_regs::SOFT_CORE_CLOCK_HZ` (about 3,800 instructions, ~30 µs,
/// per request of a booting host, waking from `wfi` included).
/// `sim/tests/firmware_reference_fabric.rs` boots the same host through
/// both and holds the two boot times within a factor of two.
pub const FIRMWARE_LATENCY: Duration = Duration::from_micros(30);

/// How often the manager looks at the mailboxes of the other switches
/// with host ports, as the firmware does
/// (`weft_drivers::hosts::REMOTE_MAILBOX_POLL_NS`): a request waiting there
/// is read at the next multiple of this time.
pub const REMOTE_MAILBOX_POLL: Duration = Duration::from_nanos(REMOTE_MAILBOX_POLL_NS);

/// Something that happens at a time.
#[derive(Debug)]
enum Event {
    /// A TLP arrives over a channel at a switch's ingress of a port.
    AtSwitch(Place, Packet, ChannelId),
    /// A TLP arrives over a channel at the node behind a port.
    AtNode(Place, Packet, ChannelId),
    /// Credits come back to a channel's sender.
    Credit(ChannelId),
    /// The manager polls the mailboxes of the other switches' host ports.
    RemoteMailboxes,
    /// A switch's oldest request in flight times out. Never queued: the
    /// switches' tables say when ([`WeftSwitch::next_timeout`]).
    CompletionTimeout(usize),
}

/// Max_Payload_Size of the simulated fabric's TLPs, bytes.
const MAX_PAYLOAD_BYTES: usize = 256;

/// Why a receiver's credits could not be set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreditError {
    /// Nothing is wired at that end.
    NotWired(Receiver),
    /// The credits of a class do not cover one largest TLP.
    TooFew {
        /// The receiver.
        receiver: Receiver,
        /// The class.
        class: FlowControlClass,
    },
}

/// The receiving end of a link, for setting the credits it advertises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receiver {
    /// The ingress of a switch port (from its node or its fabric link).
    Switch(Place),
    /// The node (host or endpoint) behind a switch port.
    Node(Place),
}

/// The whole system: switches, their links, hosts, endpoints and manager.
pub struct World {
    now: Duration,
    /// Switch 0 runs the fabric manager.
    switches: Vec<WeftSwitch>,
    manager: FabricManager,
    wiring: Wiring,
    queue: BinaryHeap<Reverse<(Duration, u64)>>,
    pending: BTreeMap<u64, Event>,
    sequence: u64,
    mailbox: VecDeque<HostConfigRequest>,
    /// A poll of the remote mailboxes is scheduled ([`Event::RemoteMailboxes`]).
    poll_scheduled: bool,
    /// Tag of the management CPU's last configuration request.
    config_tag: u8,
    /// Messages the switches sent to their CPUs (errors for the event log).
    messages: Vec<Packet>,
    /// TLPs that reached the far end of a link.
    delivered: u64,
    /// TLPs a switch's data plane took in.
    forwarded: u64,
    /// TLPs sent where nothing is wired, or to a port with no node.
    lost: u64,
    /// The firmware on its board, when it is switch 0's management CPU in
    /// place of the native manager ([`World::hand_manager_to_firmware`]).
    firmware: Option<Box<FirmwareCpu>>,
    /// What makes each device inside another hang (on a conventional
    /// switch's downstream port), by the weft port it is below and the
    /// downstream port numbers on the way to it
    /// ([`World::control_nested_device`]).
    nested: BTreeMap<(Place, Vec<u8>), HangControl>,
}

/// The manager's configuration access, its tables and its clock, for one
/// call into it.
struct ManagerHardware<'c, 'a> {
    config: SharedConfig<'c, 'a>,
    planes: Planes<'c, 'a>,
}

impl World {
    /// A fabric of one switch with `ports` ports, driven by `manager`; the
    /// switch's ID is the one the manager's settings give its own switch.
    pub fn new(ports: usize, manager: FabricManager) -> Self {
        let settings = manager.settings();
        let local = WeftSwitch::new(
            settings.switch_id,
            ports,
            settings.upstream_identity.vendor_id,
        );
        World {
            now: Duration::ZERO,
            switches: vec![local],
            manager,
            wiring: Wiring::default(),
            queue: BinaryHeap::new(),
            pending: BTreeMap::new(),
            sequence: 0,
            mailbox: VecDeque::new(),
            poll_scheduled: false,
            config_tag: 0,
            messages: Vec::new(),
            delivered: 0,
            forwarded: 0,
            lost: 0,
            firmware: None,
            nested: BTreeMap::new(),
        }
    }

    /// Makes the firmware `elf`, on `core`'s board with switch 0 as its
    /// data plane ([`crate::iss_manager`]), switch 0's management CPU from
    /// now on, at reset, its flash provisioned with the native manager's
    /// host ports and NumVFs ([`crate::iss_manager::provisioned_flash`]):
    /// it starts the fabric 100 ms later. The native
    /// manager then has no part in the world. Switch 0's ID must be the
    /// firmware's own, which its identity VSEC shows the neighbours (a
    /// fabric loop leads back to it).
    pub fn hand_manager_to_firmware(
        &mut self,
        elf: &[u8],
        core: FirmwareCore,
    ) -> Result<(), BoardError> {
        let ports = self.switch().ports();
        let flash = crate::iss_manager::provisioned_flash(self.manager.settings());
        let cpu = FirmwareCpu::new(elf, core, ports, self.now, flash)?;
        self.firmware = Some(Box::new(cpu));
        Ok(())
    }

    /// The core the firmware runs on, when the firmware is the management CPU.
    pub fn firmware_core(&self) -> Option<FirmwareCore> {
        self.firmware.as_ref().map(|cpu| cpu.board().core())
    }

    /// The firmware's ISS board, when the firmware on the ISS is the
    /// management CPU: its console, its management MAC, its counters.
    pub fn firmware(&self) -> Option<&IssBoard> {
        self.firmware.as_ref().and_then(|cpu| cpu.board().iss())
    }

    /// What the firmware printed on its console since the last take,
    /// when the firmware is the management CPU (on either core).
    pub fn take_firmware_console(&mut self) -> Option<Vec<u8>> {
        self.firmware
            .as_mut()
            .map(|cpu| cpu.board_mut().take_console())
    }

    /// Exchanges switch 0's data plane with `model`: the world lends it to
    /// the firmware's CSR window while the firmware runs, and takes it back
    /// after.
    pub(crate) fn swap_manager_switch(&mut self, model: &mut Switch) {
        std::mem::swap(self.switches[0].model_mut(), model);
    }

    /// Carries the configuration request `packet` the firmware sent
    /// out of switch 0's `port` at `at` to its function, and the completion
    /// back (the native manager's path, [`ManagerConfig`]); returns the
    /// completion and when it is back at the CPU, or `None` if none comes.
    pub(crate) fn carry_cpu_request(
        &mut self,
        port: PortIndex,
        packet: Packet,
        at: Duration,
    ) -> Option<(Packet, Duration)> {
        let World {
            switches,
            manager,
            wiring,
            config_tag,
            ..
        } = self;
        let clock = Cell::new(at);
        let requester = manager.settings().manager_id;
        lend(switches, |shared| {
            ManagerConfig {
                switches: shared,
                wiring,
                now: &clock,
                requester,
                next_tag: config_tag,
                config_wait: None,
            }
            .carry(port, packet)
        })
    }

    /// Carries out, at `at`, the hot resets and retrainings the firmware
    /// asked of switch 0's links through its CSR window ([`crate::link_control`]).
    pub(crate) fn carry_link_requests(&mut self, at: Duration) {
        let World {
            switches, wiring, ..
        } = self;
        lend(switches, |shared| carry_link_requests(shared, wiring, at));
    }

    /// Sends `packet`, which the firmware sent out of switch 0's
    /// `port`, onto that port's link at `at`.
    pub(crate) fn send_from_port(&mut self, port: PortIndex, packet: Packet, at: Duration) {
        self.transmit(Place::new(0, port.0), Way::Down, packet, at);
    }

    /// Adds a switch with ID `id` (unique in the fabric) and `ports` ports;
    /// returns its index, for [`Place`]s on it.
    pub fn add_switch(&mut self, id: u64, ports: usize) -> usize {
        let vendor_id = self.manager.settings().upstream_identity.vendor_id;
        self.switches.push(WeftSwitch::new(id, ports, vendor_id));
        self.switches.len() - 1
    }

    /// Makes the RTL carry the TLPs of the switch with index `switch`
    /// ([`WeftSwitch::use_rtl`]), before the manager writes its tables.
    pub fn use_rtl(&mut self, switch: usize, simulator: RtlSimulator) -> Result<(), RtlError> {
        match self.switches.get_mut(switch) {
            Some(switch) => switch.use_rtl(simulator),
            None => Ok(()),
        }
    }

    /// Cables port `a` to port `b` with a fabric link of shape `link`.
    pub fn connect(&mut self, a: Place, b: Place, link: LinkConfig) {
        for end in [a, b] {
            if let Some(switch) = self.switches.get_mut(end.switch) {
                switch.set_wired_role(end.port, VsecRole::Fabric);
            }
        }
        self.wiring.cable(a, b, link);
    }

    /// Connects a host's root port to `place` over `link`.
    pub fn attach_host(&mut self, place: Place, host: Host, link: LinkConfig) {
        if let Some(switch) = self.switches.get_mut(place.switch) {
            switch.set_wired_role(place.port, VsecRole::Host);
        }
        self.wiring.attach(place, Node::Host(Box::new(host)), link);
    }

    /// Connects an endpoint to `port` of switch 0 over `link`.
    pub fn attach_device(&mut self, port: u8, device: Box<dyn Device>, link: LinkConfig) {
        self.attach_device_at(Place::new(0, port), device, link);
    }

    /// Connects an endpoint to `place` over `link`.
    pub fn attach_device_at(&mut self, place: Place, device: Box<dyn Device>, link: LinkConfig) {
        self.wiring.attach(place, Node::Device(device), link);
    }

    /// Makes the endpoint behind `place` hang, as a device whose firmware
    /// has crashed: from now on it takes in every TLP that reaches it and
    /// sends nothing, neither completions nor requests of its own. Its
    /// link stays up, so nothing tells the fabric manager, and no request
    /// to it is abandoned: the host's requests are answered by the
    /// switch's completion timeout (PCIe Base 6.0 §2.8), the manager's own
    /// configuration requests by its timeout
    /// ([`crate::manager_config::MANAGER_COMPLETION_TIMEOUT`]). Returns
    /// whether an endpoint was there.
    pub fn hang_device(&mut self, place: Place) -> bool {
        match self.wiring.nodes.get_mut(&place) {
            Some(node @ Node::Device(_)) => {
                *node = Node::Hung;
                true
            }
            _ => false,
        }
    }

    /// Makes the endpoint behind `place` hang partway, as a device whose
    /// firmware crashes while it is being set up: it completes `requests`
    /// more configuration requests (reads and writes, from the fabric
    /// manager or a host, to any of its functions or below it) and, as
    /// the next one reaches it, hangs as [`World::hang_device`] makes it
    /// hang, that request and everything after it unanswered. Returns
    /// whether an endpoint that had not hung was there.
    pub fn hang_device_after(&mut self, place: Place, requests: u32) -> bool {
        if !matches!(self.wiring.nodes.get(&place), Some(Node::Device(_))) {
            return false;
        }
        self.wiring.hang_after(place, requests);
        true
    }

    /// Keeps `control`, which makes the device below the weft port
    /// `place`, at the conventional switches' downstream ports `path`
    /// (outermost first), hang ([`World::hang_nested_device`]).
    pub fn control_nested_device(&mut self, place: Place, path: Vec<u8>, control: HangControl) {
        self.nested.insert((place, path), control);
    }

    /// Makes the device at `path` below the weft port `place` hang as
    /// [`World::hang_device`] makes one with a link of its own hang, or,
    /// with `after`, partway as [`World::hang_device_after`] does: the
    /// conventional switches above it keep answering, and forward to it
    /// what they would. Returns whether a device that had not hung, made
    /// hangable by [`World::control_nested_device`], was there.
    pub fn hang_nested_device(&mut self, place: Place, path: &[u8], after: Option<u32>) -> bool {
        let Some(control) = self.nested.get(&(place, path.to_vec())) else {
            return false;
        };
        match after {
            Some(requests) => control.hang_after(requests),
            None => control.hang(),
        }
    }

    /// Records the ports of `waveform`'s switches from now on: every TLP
    /// the links carry to or from them and every TLP they drop
    /// ([`crate::waveform`]). Without it nothing is recorded, at no cost.
    pub fn record_waveform(&mut self, waveform: Waveform) {
        self.wiring.waveform = Some(Box::new(waveform));
    }

    /// Stops recording: writes what the waveform still holds, up to now,
    /// and returns the TLPs it recorded; `None` if none was recorded.
    pub fn finish_waveform(&mut self) -> Option<Result<u64, WaveformError>> {
        let waveform = self.wiring.waveform.take()?;
        let end = self.now.as_nanos() as u64 * 1000;
        Some(waveform.finish(end))
    }

    /// Simulated time now.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// The manager's switch, for its counters and tables.
    pub fn switch(&self) -> &Switch {
        self.switches[0].model()
    }

    /// Every switch, by index.
    pub fn switches(&self) -> &[WeftSwitch] {
        &self.switches
    }

    /// The shape of the link at `place`, if a node or a fabric link is
    /// wired there.
    pub fn link_at(&self, place: Place) -> Option<LinkConfig> {
        self.wiring.link_config(place)
    }

    /// The fabric manager.
    pub fn manager(&self) -> &FabricManager {
        &self.manager
    }

    /// TLPs the links have delivered so far (each link a TLP crosses counts).
    pub fn tlps_delivered(&self) -> u64 {
        self.delivered
    }

    /// TLPs the switches' data planes took in: a TLP counts once at every
    /// switch it crosses.
    pub fn tlps_forwarded(&self) -> u64 {
        self.forwarded
    }

    /// TLPs sent where nothing is wired, or to a port with no node: lost.
    pub fn tlps_lost(&self) -> u64 {
        self.lost
    }

    /// TLPs on a link or waiting for its credits now, not yet delivered.
    pub fn tlps_in_flight(&self) -> usize {
        let on_links = self
            .pending
            .values()
            .filter(|event| !matches!(event, Event::Credit(_)))
            .count();
        on_links + self.wiring.waiting()
    }

    /// Sets the credits `receiver` advertises (PCIe Base 6.0 §2.6.1) and
    /// how long it keeps each TLP's buffer before freeing it (a receiver
    /// that returns credits slowly). Call it while the link is idle: its
    /// credits restart from `credits`.
    pub fn set_receiver_credits(
        &mut self,
        receiver: Receiver,
        credits: Credits,
        release_delay: Duration,
    ) -> Result<(), CreditError> {
        // §2.6.1: a receiver advertises room for the largest TLP it takes
        // (Max_Payload_Size 256 here), or that TLP could never be sent.
        for class in [
            FlowControlClass::Posted,
            FlowControlClass::NonPosted,
            FlowControlClass::Completion,
        ] {
            let largest = CreditCost {
                class,
                data: (MAX_PAYLOAD_BYTES / DATA_CREDIT_BYTES) as u32,
            };
            if !credits.covers(largest) {
                return Err(CreditError::TooFew { receiver, class });
            }
        }
        let channel = match receiver {
            Receiver::Node(place) => (place, Way::Down),
            Receiver::Switch(place) => match self.wiring.cabled_to(place) {
                Some(far) => (far, Way::Down),
                None => (place, Way::Up),
            },
        };
        if self.wiring.set_receiver(channel, credits, release_delay) {
            Ok(())
        } else {
            Err(CreditError::NotWired(receiver))
        }
    }

    /// Messages the switches' CPUs received (error reports, PME).
    pub fn messages(&self) -> &[Packet] {
        &self.messages
    }

    /// Runs `action` with the manager's hardware: configuration access and
    /// every switch's tables, on a clock starting now; returns the result
    /// and the clock's time at the end.
    fn with_hardware<R>(
        &mut self,
        action: impl FnOnce(&mut FabricManager, &mut ManagerHardware<'_, '_>, &Cell<Duration>) -> R,
    ) -> (R, Duration) {
        let World {
            now,
            switches,
            manager,
            wiring,
            config_tag,
            ..
        } = self;
        let clock = Cell::new(*now);
        // What the manager logs carries the simulated time.
        manager.set_time(now.as_nanos() as u64);
        let requester = manager.settings().manager_id;
        let result = lend(switches, |shared| {
            let config = RefCell::new(ManagerConfig {
                switches: shared,
                wiring,
                now: &clock,
                requester,
                next_tag: config_tag,
                config_wait: None,
            });
            let mut hardware = ManagerHardware {
                config: SharedConfig(&config),
                planes: Planes::new(shared, SharedConfig(&config)),
            };
            let result = action(manager, &mut hardware, &clock);
            drop(hardware);
            // What the manager asked of the links last (a retrain) is carried out too.
            let config = config.into_inner();
            carry_link_requests(config.switches, config.wiring, clock.get());
            result
        });
        (result, clock.get())
    }

    /// Starts the fabric manager: discovery, enumeration and table
    /// programming on every switch.
    pub fn start_manager(&mut self) -> Result<(), weft_fabric::manager::StartError> {
        let reset_at_ns = self.now.as_nanos() as u64;
        let (started, end) = self.with_hardware(|manager, hardware, clock| {
            let mut timer = WorldTimer {
                now: clock,
                waited: false,
            };
            let ManagerHardware { config, planes } = hardware;
            manager.start(config, &mut timer, planes, reset_at_ns)
        });
        self.now = self.now.max(end);
        started
    }

    /// Runs `action` on the fabric manager with its configuration access
    /// (diagnostics), every switch's tables and the host mailbox (bind,
    /// unbind), then sends what it produced.
    pub fn with_manager<R>(
        &mut self,
        action: impl FnOnce(
            &mut FabricManager,
            &mut dyn FabricConfig,
            &mut Planes<'_, '_>,
            &mut dyn HostInterface,
        ) -> R,
    ) -> R {
        self.with_manager_and_timer(|manager, config, planes, hosts, _| {
            action(manager, config, planes, hosts)
        })
    }

    /// [`World::with_manager`] with the manager's clock too, for a request
    /// that waits (a hot reset, `weft_fabric::link_control`): the world's
    /// time moves on to where the manager's ended.
    pub fn with_manager_and_timer<R>(
        &mut self,
        action: impl FnOnce(
            &mut FabricManager,
            &mut dyn FabricConfig,
            &mut Planes<'_, '_>,
            &mut dyn HostInterface,
            &mut dyn Timer,
        ) -> R,
    ) -> R {
        let outbox = Outbox {
            queue: VecDeque::new(),
            out: Vec::new(),
        };
        let ((result, waited, outbox), end) = self.with_hardware(|manager, hardware, clock| {
            let mut timer = WorldTimer {
                now: clock,
                waited: false,
            };
            let ManagerHardware { config, planes } = hardware;
            let mut hosts = fabric_hosts(manager, outbox, config, clock);
            let result = action(manager, config, planes, &mut hosts, &mut timer);
            (result, timer.waited, hosts.into_local())
        });
        // The manager waited, and the world with it.
        if waited {
            self.now = self.now.max(end);
        }
        // Configuration requests the manager sent took their time on the links.
        self.send_from_cpu(outbox.out, end);
        self.flush_synthesized();
        result
    }

    /// A host's view of the fabric while its software runs: the host is
    /// taken out of the world for the call and put back after.
    pub fn with_host<R>(
        &mut self,
        place: Place,
        action: impl FnOnce(&mut Host, &mut HostLink<'_>) -> R,
    ) -> R {
        let Some(Node::Host(mut host)) = self.wiring.nodes.remove(&place) else {
            panic!("{place:?} has no host");
        };
        let result = {
            let mut link = HostLink { world: self, place };
            action(&mut host, &mut link)
        };
        self.wiring.nodes.insert(place, Node::Host(host));
        result
    }

    /// Lets the system run until `deadline` with no host software waiting.
    pub fn run_until(&mut self, deadline: Duration) {
        while let Some(at) = self.next_event_time() {
            if at > deadline {
                break;
            }
            self.step(None);
        }
        self.now = self.now.max(deadline);
    }

    fn next_event_time(&self) -> Option<Duration> {
        let queued = self.next_queued();
        match self.firmware.as_ref().map(|cpu| cpu.wakes_at()) {
            Some(wakes) => Some(queued.map_or(wakes, |at| at.min(wakes))),
            None => queued,
        }
    }

    /// When the world next does something other than run the firmware:
    /// its next queued event or a switch's next completion timeout.
    fn next_queued(&self) -> Option<Duration> {
        let event = self.queue.peek().map(|Reverse((at, _))| *at);
        let timeout = self.next_timeout().map(|(_, at)| at);
        event.into_iter().chain(timeout).min()
    }

    /// The switch whose oldest request in flight times out first, and when.
    fn next_timeout(&self) -> Option<(usize, Duration)> {
        self.switches
            .iter()
            .enumerate()
            .filter_map(|(index, switch)| Some((index, switch.next_timeout()?)))
            .min_by_key(|&(_, at)| at)
    }

    fn schedule(&mut self, at: Duration, event: Event) {
        self.sequence += 1;
        self.queue.push(Reverse((at, self.sequence)));
        self.pending.insert(self.sequence, event);
    }

    /// Puts `packet` on the link at `place` the way `way` at `at`; it
    /// arrives when the link and its receiver's credits say.
    fn transmit(&mut self, place: Place, way: Way, packet: Packet, at: Duration) {
        let channel = (place, way);
        if self.wiring.end_of(channel).is_none() {
            self.lost += 1;
            return;
        }
        if let Some((arrival, packet)) = self.wiring.offer(channel, packet, at) {
            self.arrive(channel, arrival, packet);
        }
    }

    /// Schedules `packet`'s arrival at the far end of `channel`.
    fn arrive(&mut self, channel: ChannelId, arrival: Duration, packet: Packet) {
        let event = match self.wiring.end_of(channel) {
            Some(End::Switch(place)) => Event::AtSwitch(place, packet, channel),
            Some(End::Node(place)) => Event::AtNode(place, packet, channel),
            None => {
                self.lost += 1;
                return;
            }
        };
        self.schedule(arrival, event);
    }

    /// The receiver of `channel` took in a TLP costing `cost` now: the
    /// credits go back to the sender.
    fn release(&mut self, channel: ChannelId, cost: CreditCost) {
        if let Some(back) = self.wiring.release(channel, self.now, cost) {
            self.schedule(back, Event::Credit(channel));
        }
    }

    /// Credits came back to `channel`: what waited for them leaves.
    fn credited(&mut self, channel: ChannelId) {
        for (arrival, packet) in self.wiring.drain(channel, self.now) {
            self.arrive(channel, arrival, packet);
        }
    }

    /// Handles the next event. A TLP arriving at `waiting_host` is returned
    /// instead of handled: that host's software is waiting for it.
    fn step(&mut self, waiting_host: Option<Place>) -> Option<Packet> {
        let queued = self.next_queued();
        if let Some(mut cpu) = self.firmware.take() {
            let wakes = cpu.wakes_at();
            if queued.is_none_or(|at| wakes <= at) {
                self.now = self.now.max(wakes);
                cpu.run_slice(self, queued);
                self.firmware = Some(cpu);
                return None;
            }
            self.firmware = Some(cpu);
        }
        let (at, event) = match self.next_timeout() {
            // A request due at the time a TLP arrives is timed out first,
            // as the switch's own clock would read it at that TLP.
            Some((switch, at)) if Some(at) == queued => (at, Event::CompletionTimeout(switch)),
            _ => {
                let Reverse((at, sequence)) = self.queue.pop()?;
                (at, self.pending.remove(&sequence)?)
            }
        };
        self.now = self.now.max(at);
        self.wiring.advance_waveform(self.now);
        match event {
            Event::AtSwitch(place, packet, channel) => {
                self.delivered += 1;
                self.at_switch(place, packet, channel);
            }
            Event::AtNode(place, packet, channel) if Some(place) == waiting_host => {
                self.delivered += 1;
                self.release(channel, CreditCost::of(&packet));
                return Some(packet);
            }
            Event::AtNode(place, packet, channel) => {
                self.delivered += 1;
                self.release(channel, CreditCost::of(&packet));
                self.at_node(place, packet);
            }
            Event::Credit(channel) => self.credited(channel),
            Event::RemoteMailboxes => {
                self.poll_scheduled = false;
                self.service_mailbox();
            }
            Event::CompletionTimeout(switch) => self.time_out(switch),
        }
        self.poll_nodes();
        None
    }

    fn at_switch(&mut self, place: Place, packet: Packet, channel: ChannelId) {
        let cost = CreditCost::of(&packet);
        let Ok(bytes) = packet.to_bytes() else {
            // Nodes send well-formed TLPs; a malformed one goes nowhere
            // (but its buffer is freed).
            self.lost += 1;
            self.release(channel, cost);
            return;
        };
        if place.switch >= self.switches.len() {
            self.lost += 1;
            return;
        }
        // The switch's clock reads the TLP's arrival: what has timed out
        // by now leaves first, and a request forwarded now is stamped now.
        self.time_out(place.switch);
        let switch = &mut self.switches[place.switch];
        let forwarding = match switch.forward(PortIndex(place.port), &bytes) {
            Ok(forwarding) => forwarding,
            Err(_) => {
                // Backpressure: the link partner offers it again shortly.
                let retry = self.now + Duration::from_micros(1);
                self.delivered -= 1;
                self.schedule(retry, Event::AtSwitch(place, packet, channel));
                return;
            }
        };
        self.forwarded += 1;
        self.wiring.note_forwarding(place, self.now, &forwarding);
        // The switch took the TLP in: its buffer frees as it moves on.
        self.release(channel, cost);
        let leave = self.now + SWITCH_LATENCY;
        if place.switch != 0 {
            // The firmware's in-band write to this switch's injector.
            self.send_injected(place.switch, leave);
        }
        for delivery in forwarding.deliveries {
            match delivery.to {
                Destination::Port(out) => self.transmit(
                    Place::new(place.switch, out.0),
                    Way::Down,
                    delivery.packet,
                    leave,
                ),
                Destination::Cpu => {
                    self.deliver_to_cpu(place.switch, delivery.from, delivery.packet)
                }
            }
        }
    }

    fn deliver_to_cpu(&mut self, switch: usize, from: PortIndex, packet: Packet) {
        if let (0, Some(cpu)) = (switch, self.firmware.as_mut()) {
            cpu.deliver(from, &packet);
            return;
        }
        match packet.header.body {
            // Another switch's host port: its own mailbox, which the
            // manager polls in-band (the firmware wakes itself to).
            Body::Config(_) if switch != 0 => {
                if let Ok(bytes) = packet.to_bytes() {
                    self.switches[switch]
                        .csr_window()
                        .queue_for_cpu(from, &bytes);
                }
                // One poll reads every remote mailbox.
                if self.firmware.is_none() && !self.poll_scheduled {
                    self.poll_scheduled = true;
                    let period = REMOTE_MAILBOX_POLL.as_nanos();
                    let next = (self.now.as_nanos() / period + 1) * period;
                    self.schedule(Duration::from_nanos(next as u64), Event::RemoteMailboxes);
                }
            }
            // Host configuration requests reach the manager's mailbox.
            Body::Config(request) => {
                let data = u32::from_le_bytes(
                    packet
                        .payload
                        .get(..4)
                        .and_then(|b| b.try_into().ok())
                        .unwrap_or([0; 4]),
                );
                self.mailbox.push_back(HostConfigRequest {
                    switch: self.manager.settings().switch_id,
                    port: from,
                    request,
                    data,
                });
                self.service_mailbox();
            }
            _ => self.messages.push(packet),
        }
    }

    /// Answers the requests in switch 0's mailbox and in the other
    /// switches' mailboxes.
    fn service_mailbox(&mut self) {
        let outbox = Outbox {
            queue: std::mem::take(&mut self.mailbox),
            out: Vec::new(),
        };
        let (outbox, end) = self.with_hardware(|manager, hardware, clock| {
            let ManagerHardware { config, planes } = hardware;
            let mut hosts = fabric_hosts(manager, outbox, config, clock);
            // A request the manager cannot answer is its bug; the host then
            // times out, as it would.
            let _ = manager.service(config, planes, &mut hosts);
            hosts.into_local()
        });
        // Requests the manager forwarded took their time on the links.
        self.send_from_cpu(outbox.out, end);
    }

    /// Sends what the management CPU produced by `ready`: out of switch 0's
    /// ports, and through the other switches' injectors.
    fn send_from_cpu(&mut self, out: Vec<(u8, Packet)>, ready: Duration) {
        let at = ready.max(self.now) + FIRMWARE_LATENCY;
        for (port, packet) in out {
            self.transmit(Place::new(0, port), Way::Down, packet, at);
        }
        for switch in 1..self.switches.len() {
            self.send_injected(switch, at);
        }
    }

    /// Sends at `at` the TLPs the manager put into the injector of the
    /// switch with index `switch` in-band (not the manager's own switch,
    /// whose injector the management CPU drives directly).
    fn send_injected(&mut self, switch: usize, at: Duration) {
        let injected = self.switches[switch].take_injected();
        for delivery in injected {
            if let Destination::Port(port) = delivery.to {
                self.transmit(Place::new(switch, port.0), Way::Down, delivery.packet, at);
            }
        }
    }

    /// Completions the switches synthesized for abandoned requests go out of their ports.
    pub(crate) fn flush_synthesized(&mut self) {
        let leave = self.now + SWITCH_LATENCY;
        for index in 0..self.switches.len() {
            let synthesized = self.switches[index].take_synthesized();
            self.send_synthesized(index, synthesized, leave);
        }
    }

    /// Moves the clock of the switch with index `switch` on to now and
    /// sends the Completer Aborts of the requests timed out by then
    /// (PCIe Base 6.0 §2.8): they leave now, the timeout after their
    /// requests arrived, as the world wakes the switch then.
    fn time_out(&mut self, switch: usize) {
        let timed_out = self.switches[switch].advance_to(self.now);
        self.send_synthesized(switch, timed_out, self.now);
    }

    /// Sends the completions the switch with index `switch` synthesized
    /// (for abandoned or timed-out requests) out of the ports they name,
    /// at `at`.
    fn send_synthesized(&mut self, switch: usize, completions: Vec<Delivery>, at: Duration) {
        for delivery in completions {
            if let Destination::Port(port) = delivery.to {
                self.transmit(Place::new(switch, port.0), Way::Down, delivery.packet, at);
            }
        }
    }

    fn at_node(&mut self, place: Place, packet: Packet) {
        let now = self.now;
        self.wiring.take_config_request(place, &packet);
        let answers = match self.wiring.nodes.get_mut(&place) {
            Some(Node::Device(device)) => device.handle(now, &packet),
            Some(Node::Host(host)) => host.handle(now, packet),
            Some(Node::Hung) => Vec::new(),
            None => {
                self.lost += 1;
                Vec::new()
            }
        };
        for answer in answers {
            self.transmit(place, Way::Up, answer, now);
        }
    }

    /// Lets every node send what it has to send now (DMA engines, interrupts).
    fn poll_nodes(&mut self) {
        let now = self.now;
        let mut sent = Vec::new();
        for (&place, node) in self.wiring.nodes.iter_mut() {
            loop {
                let batch = match node {
                    Node::Device(device) => device.poll(now),
                    Node::Host(host) => host.poll(now),
                    Node::Hung => Vec::new(),
                };
                if batch.is_empty() {
                    break;
                }
                sent.extend(batch.into_iter().map(|packet| (place, packet)));
            }
        }
        for (place, packet) in sent {
            self.transmit(place, Way::Up, packet, now);
        }
    }
}

/// A host's view of everything past its root port.
pub struct HostLink<'a> {
    world: &'a mut World,
    place: Place,
}

impl Fabric for HostLink<'_> {
    fn now(&self) -> Duration {
        self.world.now
    }

    fn send(&mut self, packet: Packet) {
        let now = self.world.now;
        self.world.transmit(self.place, Way::Up, packet, now);
    }

    fn run(&mut self, deadline: Duration) -> Vec<Packet> {
        self.world.poll_nodes();
        let mut arrived = Vec::new();
        while let Some(at) = self.world.next_event_time() {
            if at > deadline || (!arrived.is_empty() && at > self.world.now) {
                break;
            }
            if let Some(packet) = self.world.step(Some(self.place)) {
                arrived.push(packet);
            }
        }
        if arrived.is_empty() {
            self.world.now = self.world.now.max(deadline);
        }
        arrived
    }
}

/// The manager's clock: waiting moves simulated time on (nothing else runs
/// meanwhile, as nothing does while the fabric manager enumerates).
struct WorldTimer<'a> {
    now: &'a Cell<Duration>,
    /// Whether the manager waited on it.
    waited: bool,
}

impl Timer for WorldTimer<'_> {
    fn now_ns(&mut self) -> u64 {
        self.now.get().as_nanos() as u64
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.waited = true;
        self.now
            .set(self.now.get().max(Duration::from_nanos(deadline_ns)));
    }
}

/// Every host port's interface for one call into the manager: `local`,
/// switch 0's, and the mailboxes of the other switches with host ports,
/// read in-band through `config` on the manager's clock.
fn fabric_hosts<'c, 'a, 'k>(
    manager: &FabricManager,
    local: Outbox,
    config: &SharedConfig<'c, 'a>,
    clock: &'k Cell<Duration>,
) -> FabricHosts<Outbox, SharedConfig<'c, 'a>, WorldTimer<'k>> {
    FabricHosts::of_manager(
        manager,
        local,
        || config.clone(),
        || WorldTimer {
            now: clock,
            waited: false,
        },
    )
}

/// Switch 0's mailbox in, and the TLPs the management CPU sends out of its host ports.
struct Outbox {
    queue: VecDeque<HostConfigRequest>,
    out: Vec<(u8, Packet)>,
}

impl HostInterface for Outbox {
    fn receive(&mut self) -> Option<HostConfigRequest> {
        self.queue.pop_front()
    }

    // `fabric_hosts` hands this one only switch 0's completions and MSIs.
    fn complete(
        &mut self,
        _switch: u64,
        port: PortIndex,
        completion: Completion,
        data: Option<u32>,
    ) -> Result<(), HostSendError> {
        let payload = data.map(|dw| dw.to_le_bytes().to_vec()).unwrap_or_default();
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Completion(completion),
        };
        self.out.push((port.0, Packet::new(header, payload)));
        Ok(())
    }

    fn send_msi(
        &mut self,
        _switch: u64,
        port: PortIndex,
        requester: Bdf,
        message: MsiMessage,
    ) -> Result<(), HostSendError> {
        // §6.1.4: an MSI is a one-DW memory write of the data to the address.
        self.out.push((
            port.0,
            weft_devices::interrupt::msi_write(requester, message),
        ));
        Ok(())
    }
}
