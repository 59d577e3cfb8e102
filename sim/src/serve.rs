//! `weft-sim serve`: the reference fabric as a virtual board whose
//! management port speaks `weft-proto` on a localhost UDP port, so that
//! `weftctl` drives a simulated switch as it drives a real one.
//!
//! The server does what the firmware's management server does, through the
//! same `weft_proto::Responder`: every datagram is checked (MAC, replay
//! counter, target switch, version), a repeat is answered from the reply
//! cache without running again, and a new request is answered by the
//! fabric manager through `weft_fabric::management::handle`. After a
//! bind or unbind, simulated time moves on until the hot-plug interrupt
//! has reached the host, and the host's hot-plug driver handles it, so
//! the host sees the device come or go before the next request.
//!
//! The virtual board ([`SimBoard`]) keeps its configuration flash in
//! memory for as long as the server runs, so `SaveConfig` and
//! `RestoreConfig` work across requests. A reset is recorded
//! ([`Server::resets`]) and said on stderr once its answer is sent, as
//! the firmware's watchdog would fire then; the simulated fabric runs on
//! as it was. CSR access reaches the manager's switch's CSR window
//! (weft-model's, through which the manager writes its tables). A NumVFs
//! change that waits for its VFs moves simulated time on by the 100 ms the
//! VFs need (PCIe Base 6.0 §9.3.3.3.1) when its operation is polled, so a
//! client's poll finds it done.
//!
//! The board's flash also has the firmware's image slots and boot record
//! (`weft_fabric::firmware_update`) in memory, erased at each start, so
//! `weftctl firmware update` runs against it as against a switch: the
//! image goes to the slot not running, is verified and committed for a
//! trial at the next start. The board starts as the firmware does: the
//! boot record picks the slot, and once the management port is open the
//! running image checks in.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use weft_fabric::board::{Board, BoardFault};
use weft_fabric::firmware_update::{boot, FirmwareService, FirmwareUpdate};
use weft_fabric::management::{handle, BoardInfo, Hardware, PortLink, PortLinks};
use weft_fabric::memory_flash::MemoryFlash;
use weft_fabric::persist::{ArrayFlash, Flash, PersistError};
use weft_fabric::readiness::RESET_TO_FIRST_REQUEST_NS;
use weft_pcie::link::{LinkSpeed as PcieSpeed, LinkWidth};
use weft_proto::{
    Key, LinkSpeed, LinkState, LinkStatus, PortAction, Request, ResetScope, Responder, Response,
    SwitchId, Verifier, MANAGEMENT_UDP_PORT, MAX_DATAGRAM,
};
use weft_regs::driver::CsrBus;
use weft_regs::soc::spi_flash::{IMAGE_SLOT_SIZE, SECTOR_SIZE};

use crate::planes::Planes;
use crate::scenario::engine::{let_interrupts_arrive, Engine, RunError};
use crate::scenario::validate::Action;
use crate::scenario::Scenario;
use crate::switch::WeftSwitch;
use crate::wiring::Place;
use crate::world::World;

/// The address served when none is given: the management port on localhost.
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(
    std::net::IpAddr::V4(Ipv4Addr::LOCALHOST),
    MANAGEMENT_UDP_PORT,
);

/// How many recent answers are kept for retried requests.
pub const REPLY_CACHE_ENTRIES: usize = 8;

/// How often the serving loop looks at its stop flag while no datagram arrives.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// The board name the virtual board reports.
pub const BOARD_NAME: &str = "weft-sim";

/// How the server is reached and which key it checks.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The UDP address to listen on; only 127.0.0.1 is accepted.
    pub listen: SocketAddr,
    /// The switch's key; [`Key::insecure_public`] for insecure mode.
    pub key: Key,
    /// The replay counter the switch starts from: only counters above it
    /// are accepted. 0 is a switch that never accepted a request; the
    /// firmware resumes after a restart from the mark kept in flash, up to
    /// a minute of client clock ahead of the last counter it accepted, and
    /// a floor ahead of the clients' clocks imitates that.
    pub counter_floor: u64,
}

/// Why the server could not start or stopped.
#[derive(Debug)]
pub enum ServeError {
    /// The address is not on 127.0.0.1: a simulated board is never exposed
    /// beyond this machine.
    NotLocalhost(SocketAddr),
    /// The UDP port could not be opened.
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// The socket failed while serving.
    Socket(io::Error),
    /// The reference fabric could not be brought up.
    Board(RunError),
    /// The board's flash did not hold what its boot record needs.
    Flash(PersistError),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::NotLocalhost(addr) => write!(
                f,
                "{addr} is not on 127.0.0.1; the simulated board listens on localhost only \
                 (use --listen 127.0.0.1:PORT)"
            ),
            ServeError::Bind { addr, source } => write!(
                f,
                "cannot listen on udp {addr}: {source} (is another server using the port? \
                 choose one with --listen 127.0.0.1:PORT)"
            ),
            ServeError::Socket(source) => write!(f, "the management socket failed: {source}"),
            ServeError::Board(error) => {
                write!(f, "the reference fabric did not come up at {error}")
            }
            ServeError::Flash(error) => write!(
                f,
                "the board's flash failed at start ({error:?}); this is a bug in weft-sim"
            ),
        }
    }
}

impl std::error::Error for ServeError {}

/// The link of every wired port, by switch ID and port, as the simulation
/// wired it: links come up trained at their configured speed and width.
#[derive(Clone, Debug, Default)]
pub struct WiredLinks {
    links: BTreeMap<(u64, u8), (LinkSpeed, u8)>,
}

impl WiredLinks {
    /// The links of `world`'s switches.
    pub fn of(world: &World) -> Self {
        let mut links = BTreeMap::new();
        for (index, switch) in world.switches().iter().enumerate() {
            for port in 0..switch.model().ports() {
                let Ok(port) = u8::try_from(port) else {
                    break;
                };
                if let Some(config) = world.link_at(Place::new(index, port)) {
                    let shape = (speed(config.link.speed), width(config.link.width));
                    links.insert((switch.id(), port), shape);
                }
            }
        }
        WiredLinks { links }
    }
}

fn speed(speed: PcieSpeed) -> LinkSpeed {
    match speed {
        PcieSpeed::Gen1 => LinkSpeed::Gen1,
        PcieSpeed::Gen2 => LinkSpeed::Gen2,
        PcieSpeed::Gen3 => LinkSpeed::Gen3,
        PcieSpeed::Gen4 => LinkSpeed::Gen4,
        PcieSpeed::Gen5 => LinkSpeed::Gen5,
    }
}

fn width(width: LinkWidth) -> u8 {
    match width {
        LinkWidth::X1 => 1,
        LinkWidth::X2 => 2,
        LinkWidth::X4 => 4,
        LinkWidth::X8 => 8,
        LinkWidth::X16 => 16,
    }
}

/// The simulated ports support what the reference links run at.
const MAX_SHAPE: (LinkSpeed, u8) = (LinkSpeed::Gen3, 16);

impl PortLinks for WiredLinks {
    fn link(&mut self, switch_id: u64, port: u8) -> PortLink {
        let status = match self.links.get(&(switch_id, port)) {
            Some(&(speed, width)) => LinkStatus {
                state: LinkState::Up,
                speed: Some(speed),
                width,
            },
            None => LinkStatus {
                state: LinkState::Down,
                speed: None,
                width: 0,
            },
        };
        PortLink {
            status,
            max_speed: MAX_SHAPE.0,
            max_width: MAX_SHAPE.1,
        }
    }
}

/// Bytes of the virtual board's configuration flash: two 4 KiB sectors,
/// as the firmware's configuration region.
pub const CONFIG_FLASH_BYTES: usize = 8192;

/// The virtual board's configuration flash, in memory, and the resets
/// triggered; [`SimBoard::on`] gives it the manager's switch's CSR window
/// for one request.
#[derive(Clone, Debug, Default)]
pub struct SimBoard {
    flash: ArrayFlash<CONFIG_FLASH_BYTES>,
    /// Resets triggered and not yet carried out.
    pending: Vec<ResetScope>,
}

impl SimBoard {
    /// A board with its flash erased.
    pub fn new() -> Self {
        SimBoard::default()
    }

    /// The resets triggered since the last call, oldest first.
    pub fn take_resets(&mut self) -> Vec<ResetScope> {
        std::mem::take(&mut self.pending)
    }

    /// The board with the CSR window of the manager's switch among `planes`.
    pub fn on<'b, 'a>(&'b mut self, planes: &Planes<'_, 'a>) -> BoardOn<'b, 'a> {
        BoardOn {
            board: self,
            switch: planes.manager_switch(),
        }
    }
}

/// The virtual board for one request: its flash and resets, and the
/// manager's switch's CSR window.
pub struct BoardOn<'b, 'a> {
    board: &'b mut SimBoard,
    switch: &'a RefCell<WeftSwitch>,
}

impl Board for BoardOn<'_, '_> {
    fn read_csr(&mut self, address: u32) -> Result<u32, BoardFault> {
        Ok(self.switch.borrow_mut().csr_window().read32(address))
    }

    fn write_csr(&mut self, address: u32, value: u32) -> Result<(), BoardFault> {
        self.switch
            .borrow_mut()
            .csr_window()
            .write32(address, value);
        Ok(())
    }

    fn config_flash(&mut self) -> Option<&mut dyn Flash> {
        Some(&mut self.board.flash)
    }

    fn resets(&self, _scope: ResetScope) -> bool {
        true
    }

    fn schedule_reset(&mut self, scope: ResetScope) {
        self.board.pending.push(scope);
    }
}

/// The virtual board: the simulated fabric behind a management socket.
pub struct Server {
    socket: UdpSocket,
    world: World,
    responder: Responder<REPLY_CACHE_ENTRIES>,
    board: BoardInfo,
    links: WiredLinks,
    /// Each host's port on the manager's switch.
    host_places: Vec<Place>,
    sim_board: SimBoard,
    /// Every reset carried out, oldest first.
    resets: Vec<ResetScope>,
    /// The firmware update of the board's flash.
    firmware: FirmwareUpdate<MemoryFlash<Vec<u8>>>,
}

/// An erased region of `size` bytes of the board's flash.
fn erased(size: u32) -> MemoryFlash<Vec<u8>> {
    MemoryFlash::new(vec![0xFF; size as usize], SECTOR_SIZE)
}

/// The board's firmware update on an erased flash, started as the
/// firmware starts: the boot record picks the slot that runs.
fn firmware_update() -> Result<FirmwareUpdate<MemoryFlash<Vec<u8>>>, PersistError> {
    let mut boot_flash = erased(2 * SECTOR_SIZE);
    let start = boot(&mut boot_flash)?;
    let images = [erased(IMAGE_SLOT_SIZE), erased(IMAGE_SLOT_SIZE)];
    FirmwareUpdate::new(images, boot_flash, erased(2 * SECTOR_SIZE), start.slot)
}

/// The reference fabric after its first steps, ready to be managed: the
/// built-in reference scenario up to and including its first boot
/// (enumerated, the GPUs bound to host 1, both hosts booted with their
/// drivers loaded; the NVMe drive and its VFs free).
pub fn virtual_board(scenario: &Scenario) -> Result<World, RunError> {
    let mut engine = Engine::new(scenario)?;
    let boot = scenario
        .steps
        .iter()
        .position(|step| matches!(step.action, Action::Boot { .. }))
        .unwrap_or(scenario.steps.len().saturating_sub(1));
    for index in 0..=boot.min(scenario.steps.len().saturating_sub(1)) {
        engine.run_step(index)?;
    }
    Ok(engine.into_world())
}

impl Server {
    /// Opens the UDP port and brings up the reference fabric
    /// ([`virtual_board`]).
    pub fn start(config: ServeConfig) -> Result<Server, ServeError> {
        if config.listen.ip() != Ipv4Addr::LOCALHOST {
            return Err(ServeError::NotLocalhost(config.listen));
        }
        let socket = UdpSocket::bind(config.listen).map_err(|source| ServeError::Bind {
            addr: config.listen,
            source,
        })?;
        socket
            .set_read_timeout(Some(POLL_INTERVAL))
            .map_err(ServeError::Socket)?;
        let scenario = Scenario::reference();
        let world = virtual_board(&scenario).map_err(ServeError::Board)?;
        let switch = SwitchId(world.manager().settings().switch_id);
        let board = BoardInfo {
            board: BOARD_NAME,
            version: package_version(),
            build: "",
            ports: scenario.switches[0].ports,
            authenticated: !config.key.is_insecure(),
        };
        let links = WiredLinks::of(&world);
        let mut firmware = firmware_update().map_err(ServeError::Flash)?;
        // The management port is open: the running image is up.
        firmware.check_in().map_err(ServeError::Flash)?;
        Ok(Server {
            socket,
            world,
            responder: Responder::new(Verifier::resume(switch, config.key, config.counter_floor)),
            board,
            links,
            host_places: scenario.hosts.iter().map(|h| h.place).collect(),
            sim_board: SimBoard::new(),
            resets: Vec::new(),
            firmware,
        })
    }

    /// The address the server listens on (the port chosen, if 0 was asked for).
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.socket.local_addr().map_err(ServeError::Socket)
    }

    /// The switch's identity, which requests must name.
    pub fn switch(&self) -> SwitchId {
        self.responder.switch()
    }

    /// Whether the server runs with the publicly known key.
    pub fn is_insecure(&self) -> bool {
        self.responder.verifier().key().is_insecure()
    }

    /// The simulated fabric.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The firmware update and the flash it writes.
    pub fn firmware(&self) -> &FirmwareUpdate<MemoryFlash<Vec<u8>>> {
        &self.firmware
    }

    /// The resets triggered so far, oldest first.
    pub fn resets(&self) -> &[ResetScope] {
        &self.resets
    }

    /// Answers datagrams until `stop` is set (checked at least every
    /// [`POLL_INTERVAL`]).
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), ServeError> {
        let mut datagram = vec![0u8; MAX_DATAGRAM + 1];
        let mut answer = vec![0u8; MAX_DATAGRAM];
        while !stop.load(Ordering::Relaxed) {
            let (len, from) = match self.socket.recv_from(&mut datagram) {
                Ok(received) => received,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    continue
                }
                // An ICMP port unreachable from an earlier answer's client.
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => continue,
                Err(e) => return Err(ServeError::Socket(e)),
            };
            let n = self.answer(&datagram[..len], &mut answer);
            if n > 0 {
                // A lost answer is the client's to retry.
                let _ = self.socket.send_to(&answer[..n], from);
            }
        }
        Ok(())
    }

    /// The answer to one datagram, written to `out`; its length, 0 for a
    /// datagram that gets none (not a weft request).
    pub fn answer(&mut self, datagram: &[u8], out: &mut [u8]) -> usize {
        let Server {
            world,
            responder,
            board,
            links,
            host_places,
            sim_board,
            resets,
            firmware,
            ..
        } = self;
        let n = responder.answer(datagram, out, |request, trailing| {
            execute(
                world,
                board,
                links,
                sim_board,
                host_places,
                firmware,
                request,
                trailing,
            )
        });
        // The caller sends the answer next; the firmware's watchdog would
        // fire just after.
        for scope in sim_board.take_resets() {
            eprintln!("weft-sim serve: {scope:?} reset triggered; the simulated fabric runs on");
            resets.push(scope);
        }
        n
    }
}

/// Runs `request` on the fabric manager and lets the hosts see what it did.
// The server's parts, borrowed apart from its responder.
#[allow(clippy::too_many_arguments)]
fn execute(
    world: &mut World,
    board: &BoardInfo,
    links: &mut WiredLinks,
    sim_board: &mut SimBoard,
    host_places: &[Place],
    firmware: &mut dyn FirmwareService,
    request: &Request,
    trailing: &[u8],
) -> Response {
    if let Request::OperationStatus { .. } = request {
        let_vfs_become_ready(world);
    }
    let response = world.with_manager_and_timer(|manager, config, planes, hosts, timer| {
        let mut board_on = sim_board.on(planes);
        let hardware = Hardware {
            config,
            fabric: planes,
            hosts,
            links,
            firmware: Some(firmware),
            timer: Some(timer),
            board: &mut board_on,
        };
        handle(manager, board, request, trailing, hardware)
    });
    // A managed unbind answered in progress pressed the slot's Attention
    // Button: the host's hot-plug driver answers it now.
    let changes_slots = matches!(
        request,
        Request::Bind { .. }
            | Request::Unbind { .. }
            | Request::PortControl {
                action: PortAction::HotReset,
                ..
            }
    );
    let acted = matches!(response, Response::Done | Response::InProgress { .. });
    if changes_slots && acted {
        let_hosts_see_hot_plug(world, host_places);
    }
    response
}

/// Moves simulated time on, while a NumVFs change waits for its VFs, by
/// the 100 ms after VF Enable before they may be accessed (PCIe Base 6.0
/// §9.3.3.3.1); a client polling the operation waits that long in wall
/// time at most once, not for simulated time that never passes.
fn let_vfs_become_ready(world: &mut World) {
    if world.manager().num_vfs_operation().is_some() {
        let wait = Duration::from_nanos(RESET_TO_FIRST_REQUEST_NS);
        world.run_until(world.now() + wait);
    }
}

/// Moves simulated time on until hot-plug interrupts have arrived, and
/// runs the hot-plug driver of each host, at `host_places`.
fn let_hosts_see_hot_plug(world: &mut World, host_places: &[Place]) {
    let_interrupts_arrive(world);
    for (index, place) in host_places.iter().enumerate() {
        let handled = world.with_host(*place, |host, link| host.service_interrupts(link));
        if let Err(error) = handled {
            eprintln!(
                "weft-sim serve: host {} failed to handle a hot-plug event: {error:?}",
                index + 1
            );
        }
    }
}

/// This package's version as major, minor, patch.
fn package_version() -> (u16, u16, u16) {
    let mut parts = env!("CARGO_PKG_VERSION")
        .split('.')
        .map(|p| p.parse::<u16>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}
