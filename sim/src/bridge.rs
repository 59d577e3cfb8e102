//! `weft-sim firmware`: the firmware ELF on the ISS board
//! ([`crate::iss_board`]) with its management MAC bridged to a line: a
//! Linux TAP interface ([`crate::tap`]), so the kernel's own tools (`ping`,
//! `weftctl`) reach the firmware's network stack as they would a board, or
//! a localhost UDP port ([`crate::udp_gateway`]), which needs no privileges.
//!
//! Time on the board follows the wall clock while the firmware waits:
//! when it sleeps in `wfi`, the bridge waits for the line or for the
//! firmware's timer alarm, whichever comes first, and moves `mtime` on by
//! the time that passed at [`CPU_CLOCK_HZ`]. While the firmware runs,
//! `mtime` counts its steps, so a busy board's clock runs at the ISS's
//! speed, which may be below the stated clock.
//!
//! With `--fabric SCENARIO` the firmware is the fabric manager of a
//! simulated fabric instead of a lone board ([`FabricStation`]): the
//! scenario (whose manager is `firmware-iss`) runs its steps, the
//! enumeration by the firmware among them, and the fabric then runs on in
//! slices of [`FABRIC_SLICE`] of simulated time while the line is
//! watched; its hosts' hot-plug drivers handle what the firmware signals
//! them, and each event is printed, so a bind sent over the line shows up
//! as the device the host found.
//!
//! With `--flash FILE` the board's configuration flash lives in FILE: read
//! at start (erased where the file ends, or all erased without one), and
//! written back whenever the firmware has programmed or erased it, so the
//! key typed on one run's console is the key of the next, and so is the
//! address: without `--ip` or `--dhcp` the bridge takes the firmware's
//! address from the network record in FILE (`weft_fabric::network_setting`),
//! as the firmware does at start, and the UDP gateway sends there.

use std::fmt;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use weft_drivers::spi_flash::NETWORK;
use weft_fabric::memory_flash::MemoryFlash;
use weft_fabric::network_setting::NetworkSetting;
use weft_fabric::persist::{load_saved, Saved};
use weft_iss::soc::{Geometry, NorFlash, Timing};
use weft_proto::{Key, DEFAULT_IPV4_ADDRESS, DEFAULT_IPV4_PREFIX_LEN};
use weft_regs::soc::spi_flash::SECTOR_SIZE;

use crate::firmware_board::FirmwareCore;
use crate::iss_board::{Activity, BoardError, IssBoard, CPU_CLOCK_HZ};
use crate::scenario::engine::Engine;
use crate::scenario::validate::ManagerPlan;
use crate::scenario::Scenario;
use crate::tap::{Tap, TapError};
use crate::udp_gateway::{GatewayError, UdpGateway};
use crate::wiring::Place;
use crate::world::World;

/// Steps the firmware runs before the bridge looks at the line again:
/// 1 ms of core time at [`CPU_CLOCK_HZ`].
pub const RUN_SLICE_STEPS: u64 = CPU_CLOCK_HZ / 1_000;

/// The longest the bridge waits for the line while the firmware sleeps
/// before it looks at its stop flag.
pub const MAX_WAIT: Duration = Duration::from_millis(50);

/// Where the firmware's management MAC is connected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineChoice {
    /// The TAP interface of this name.
    Tap(String),
    /// A gateway on this localhost UDP port.
    Udp(SocketAddr),
}

/// Where the firmware's management address comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressChoice {
    /// This address and subnet: `--ip`, or weft-proto's default.
    Static(Ipv4Cidr),
    /// A DHCP server on the TAP's side (`--dhcp`, the console's `ip dhcp`).
    Dhcp,
}

impl fmt::Display for AddressChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddressChoice::Static(cidr) => write!(f, "{cidr}"),
            AddressChoice::Dhcp => f.write_str("from DHCP"),
        }
    }
}

/// What `weft-sim firmware` runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirmwareOptions {
    /// The firmware ELF's path.
    pub elf: String,
    /// Where the MAC is connected.
    pub line: LineChoice,
    /// The firmware's address as `--ip` or `--dhcp` gave it; without
    /// either, what the `--flash` file stores, or weft-proto's default
    /// ([`stored_address`]).
    pub address: Option<AddressChoice>,
    /// Lines typed on the firmware's console at start.
    pub console: Vec<String>,
    /// The file the board's configuration flash is kept in, if any.
    pub flash: Option<PathBuf>,
    /// The scenario whose fabric the firmware manages, if any.
    pub fabric: Option<PathBuf>,
}

impl FirmwareOptions {
    /// Reads `weft-sim firmware`'s arguments; the message says what is wrong.
    pub fn parse(args: &[String]) -> Result<FirmwareOptions, String> {
        let (mut elf, mut line, mut key, mut ip, mut flash) = (None, None, None, None, None);
        let mut fabric = None;
        let (mut insecure, mut dhcp) = (false, false);
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |what: &str| args.next().cloned().ok_or(format!("{arg} needs {what}"));
            match arg.as_str() {
                "--elf" => elf = Some(value("the firmware ELF's path")?),
                "--tap" => line = Some(LineChoice::Tap(value("an interface name")?)),
                "--udp" => {
                    let text = value("an address such as 127.0.0.1:7330")?;
                    let addr = text
                        .parse()
                        .map_err(|e| format!("--udp {text}: {e} (expected 127.0.0.1:PORT)"))?;
                    line = Some(LineChoice::Udp(addr));
                }
                "--key" => {
                    let hex = value("64 hexadecimal digits")?;
                    Key::parse_hex(&hex).map_err(|e| format!("--key: {e}"))?;
                    key = Some(hex);
                }
                "--insecure" => insecure = true,
                "--dhcp" => dhcp = true,
                "--flash" => flash = Some(PathBuf::from(value("a file for the flash's contents")?)),
                "--fabric" => fabric = Some(PathBuf::from(value("a scenario file")?)),
                "--ip" => {
                    let text = value("an address such as 192.168.70.2/24")?;
                    let cidr = text.parse::<Ipv4Cidr>().map_err(|()| {
                        format!(
                            "--ip {text}: expected an address and prefix, such as 192.168.70.2/24"
                        )
                    })?;
                    ip = Some(cidr);
                }
                other => return Err(format!("unknown option {other}")),
            }
        }
        let elf = elf.ok_or("give the firmware ELF with --elf PATH")?;
        if fabric.is_some() && flash.is_some() {
            return Err(
                "--flash is for a lone board; a --fabric run keeps its flash in memory".into(),
            );
        }
        let line = line.ok_or("connect the MAC with --tap NAME or --udp 127.0.0.1:PORT")?;
        let address = match (ip, dhcp) {
            (Some(_), true) => return Err("--ip and --dhcp exclude each other".into()),
            (_, true) if matches!(line, LineChoice::Udp(_)) => {
                return Err(NO_DHCP_ON_GATEWAY.into());
            }
            (_, true) => Some(AddressChoice::Dhcp),
            (ip, false) => ip.map(AddressChoice::Static),
        };
        let mut console = Vec::new();
        match (ip, dhcp) {
            (Some(ip), _) => console.push(format!("ip {ip}")),
            (None, true) => console.push("ip dhcp".into()),
            (None, false) => {}
        }
        match (key, insecure) {
            (Some(key), false) => console.push(format!("key {key}")),
            (None, true) => console.push("insecure".into()),
            (Some(_), true) => return Err("--key and --insecure exclude each other".into()),
            (None, false) => {}
        }
        Ok(FirmwareOptions {
            elf,
            line,
            address,
            console,
            flash,
            fabric,
        })
    }
}

/// Why `--dhcp` cannot go with `--udp`.
const NO_DHCP_ON_GATEWAY: &str =
    "--dhcp needs a TAP (--tap NAME): no DHCP server answers behind the UDP gateway";

/// The firmware's address until its console's `ip` command stores another.
pub fn default_address() -> Ipv4Cidr {
    Ipv4Cidr::new(
        Ipv4Address::from(DEFAULT_IPV4_ADDRESS),
        DEFAULT_IPV4_PREFIX_LEN,
    )
}

/// Where the firmware on a board with flash `contents` takes its address
/// from at start: the network record's setting, or weft-proto's default
/// when there is no valid record (as the firmware falls back).
pub fn stored_address(contents: &[u8]) -> AddressChoice {
    let span = NETWORK.start as usize..(NETWORK.start + NETWORK.size) as usize;
    let mut region = MemoryFlash::new(contents[span].to_vec(), SECTOR_SIZE);
    match load_saved::<NetworkSetting, _>(&mut region) {
        Ok(Saved::Record(NetworkSetting::Static(fixed))) => {
            AddressChoice::Static(Ipv4Cidr::new(fixed.address(), fixed.prefix_len()))
        }
        Ok(Saved::Record(NetworkSetting::Dhcp)) => AddressChoice::Dhcp,
        Ok(Saved::Empty | Saved::Corrupt) | Err(_) => AddressChoice::Static(default_address()),
    }
}

/// Why `weft-sim firmware` could not start or stopped.
#[derive(Debug)]
pub enum BridgeError {
    /// The ELF could not be read.
    Read {
        /// Its path.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// The board could not be built from the ELF.
    Board(BoardError),
    /// The TAP interface could not be opened.
    Tap(TapError),
    /// The UDP gateway could not be opened.
    Gateway(GatewayError),
    /// Waiting for the line failed.
    Receive(io::Error),
    /// Handing a frame to the line failed.
    Send(io::Error),
    /// Writing the firmware's console output failed.
    Console(io::Error),
    /// The firmware's address is to come from DHCP, and the line is the
    /// UDP gateway, where no DHCP server answers.
    NoDhcpServer,
    /// The `--fabric` scenario could not be read, is not managed by the
    /// firmware, or one of its steps failed.
    Fabric(String),
    /// The flash file could not be read or written, or is too long.
    Flash {
        /// Its path.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::Read { path, source } => write!(
                f,
                "cannot read {path}: {source} (build it with `cargo xtask firmware`)"
            ),
            BridgeError::Board(e) => write!(f, "{e}"),
            BridgeError::Tap(e) => write!(f, "{e}"),
            BridgeError::Gateway(e) => write!(f, "{e}"),
            BridgeError::Receive(e) => write!(f, "waiting for the line: {e}"),
            BridgeError::Send(e) => write!(f, "sending a frame to the line: {e}"),
            BridgeError::Console(e) => write!(f, "writing the firmware's console: {e}"),
            BridgeError::NoDhcpServer => f.write_str(NO_DHCP_ON_GATEWAY),
            BridgeError::Fabric(why) => write!(f, "the fabric: {why}"),
            BridgeError::Flash { path, source } => write!(
                f,
                "the flash file {}: {source} (give another --flash file, or none for an erased flash)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for BridgeError {}

/// The far end of the firmware's management Ethernet.
pub trait Line {
    /// What a thread waiting on the line hands over.
    type Arrival: Send + 'static;

    /// The frame for the MAC at `station` that `arrival` makes, if any.
    fn frame(&mut self, arrival: Self::Arrival, station: [u8; 6]) -> Option<Vec<u8>>;

    /// Takes a frame the firmware sent; a frame to hand straight back to
    /// it, if the line answers at once.
    fn transmit(&mut self, frame: &[u8]) -> io::Result<Option<Vec<u8>>>;
}

impl Line for Tap {
    type Arrival = Vec<u8>;

    fn frame(&mut self, arrival: Vec<u8>, _station: [u8; 6]) -> Option<Vec<u8>> {
        Some(arrival)
    }

    fn transmit(&mut self, frame: &[u8]) -> io::Result<Option<Vec<u8>>> {
        self.send(frame)?;
        Ok(None)
    }
}

impl Line for UdpGateway {
    type Arrival = (SocketAddr, Vec<u8>);

    fn frame(&mut self, (from, datagram): Self::Arrival, station: [u8; 6]) -> Option<Vec<u8>> {
        Some(self.frame_for(from, &datagram, station))
    }

    fn transmit(&mut self, frame: &[u8]) -> io::Result<Option<Vec<u8>>> {
        self.take_frame(frame)
    }
}

/// Where the firmware's line was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Connected {
    /// The TAP interface of this name.
    Tap(String),
    /// The UDP gateway.
    Udp {
        /// The address clients send to.
        local: SocketAddr,
        /// The host the gateway stands in for on the firmware's subnet.
        host: Ipv4Address,
    },
}

impl fmt::Display for Connected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Connected::Tap(name) => write!(f, "TAP {name}"),
            Connected::Udp { local, host } => {
                write!(f, "udp {local} (as host {host} on the firmware's subnet)")
            }
        }
    }
}

/// What the bridge runs between looks at the line: a lone board, or a
/// fabric whose manager is the firmware ([`FabricStation`]).
pub trait Station {
    /// The firmware's board (its MAC, console and flash).
    fn board(&self) -> &IssBoard;

    /// Runs the firmware on; `None` while it is busy, or how long the
    /// bridge may wait for the line before the next slice.
    fn run_slice(&mut self) -> Option<Duration>;

    /// `elapsed` of wall-clock time passed while the bridge waited.
    fn advance(&mut self, elapsed: Duration);

    /// What else the slice did, printed on `console`.
    fn report(&mut self, console: &mut dyn Write) -> io::Result<()>;
}

impl Station for IssBoard {
    fn board(&self) -> &IssBoard {
        self
    }

    fn run_slice(&mut self) -> Option<Duration> {
        match self.run(RUN_SLICE_STEPS) {
            Activity::Running => None,
            Activity::Waiting => Some(IssBoard::duration_of(self.ticks_to_alarm())),
        }
    }

    fn advance(&mut self, elapsed: Duration) {
        IssBoard::advance(self, elapsed);
    }

    fn report(&mut self, _console: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// Simulated time a fabric runs between two looks at the line.
pub const FABRIC_SLICE: Duration = Duration::from_millis(1);

/// A simulated fabric managed by the firmware on the ISS, after its
/// scenario's steps (enumeration by the firmware, hosts booted).
pub struct FabricStation {
    world: World,
    /// Each host's name and the switch port it hangs off.
    hosts: Vec<(String, Place)>,
}

impl FabricStation {
    /// Runs the scenario at `path` with the firmware `image` as its
    /// manager, `console` typed on the firmware's console first.
    pub fn start(path: &Path, image: &[u8], console: &[String]) -> Result<Self, BridgeError> {
        let mut scenario = Scenario::load(path).map_err(|e| BridgeError::Fabric(e.to_string()))?;
        let ManagerPlan::Firmware { elf, core, .. } = &mut scenario.manager else {
            return Err(BridgeError::Fabric(format!(
                "{}: its fabric manager is not the firmware; give it `manager = \"firmware-iss\"`",
                path.display()
            )));
        };
        if *core != FirmwareCore::Iss {
            return Err(BridgeError::Fabric(format!(
                "{}: the firmware's management MAC reaches the line on the ISS board only \
                 (the RTL soft core's MAC is idle); give it `manager = \"firmware-iss\"`",
                path.display()
            )));
        }
        *elf = image.to_vec();
        let mut engine = Engine::new(&scenario).map_err(|e| BridgeError::Fabric(e.to_string()))?;
        let board = engine
            .world()
            .firmware()
            .ok_or_else(|| BridgeError::Fabric("the firmware did not take the fabric".into()))?;
        for line in console {
            board.console().receive(format!("{line}\r").as_bytes());
        }
        for step in 0..scenario.steps.len() {
            engine
                .run_step(step)
                .map_err(|e| BridgeError::Fabric(e.to_string()))?;
        }
        Ok(FabricStation {
            world: engine.into_world(),
            hosts: scenario
                .hosts
                .iter()
                .map(|host| (host.name.clone(), host.place))
                .collect(),
        })
    }
}

impl Station for FabricStation {
    fn board(&self) -> &IssBoard {
        self.world
            .firmware()
            .expect("a fabric station's manager is the firmware")
    }

    fn run_slice(&mut self) -> Option<Duration> {
        self.world.run_until(self.world.now() + FABRIC_SLICE);
        Some(FABRIC_SLICE)
    }

    fn advance(&mut self, _elapsed: Duration) {}

    fn report(&mut self, console: &mut dyn Write) -> io::Result<()> {
        for (name, place) in &self.hosts {
            let handled = self.world.with_host(*place, |host, link| {
                host.service_interrupts(link)
                    .map(|events| (events, host.drivers().keys().copied().collect::<Vec<_>>()))
            });
            match handled {
                Ok((events, drivers)) => {
                    for event in events {
                        for added in &event.added {
                            let driver = if drivers.contains(added) {
                                "driver bound"
                            } else {
                                "no driver"
                            };
                            writeln!(
                                console,
                                "weft-sim: {name}: hot-plug at {}: {added} added, {driver}",
                                event.port
                            )?;
                        }
                        for removed in &event.removed {
                            writeln!(
                                console,
                                "weft-sim: {name}: hot-plug at {}: {} removed",
                                event.port, removed.bdf
                            )?;
                        }
                    }
                }
                Err(error) => writeln!(console, "weft-sim: {name}: hot-plug failed: {error:?}")?,
            }
        }
        console.flush()
    }
}

/// Builds the board (or the fabric) for `options`, types its console
/// lines, connects its line and runs it until `stop` is set; `started`
/// hears where the line is once it is open and the firmware's address
/// (`weft-sim firmware` prints them).
pub fn run(
    options: &FirmwareOptions,
    console: &mut impl Write,
    stop: &AtomicBool,
    started: impl FnOnce(&Connected, AddressChoice),
) -> Result<(), BridgeError> {
    let image = std::fs::read(&options.elf).map_err(|source| BridgeError::Read {
        path: options.elf.clone(),
        source,
    })?;
    if let Some(scenario) = &options.fabric {
        let mut fabric = FabricStation::start(scenario, &image, &options.console)?;
        let address = options
            .address
            .unwrap_or(AddressChoice::Static(default_address()));
        return connect(options, address, &mut fabric, console, stop, None, started);
    }
    let mut board = match &options.flash {
        Some(path) => IssBoard::with_flash(&image, stored_flash(path)?),
        None => IssBoard::new(&image),
    }
    .map_err(BridgeError::Board)?;
    let address = options
        .address
        .unwrap_or_else(|| stored_address(&board.flash().contents()));
    let mut flash = options.flash.as_deref().map(|path| FlashFile {
        path,
        saved_writes: 0,
    });
    for line in &options.console {
        board.console().receive(format!("{line}\r").as_bytes());
    }
    connect(
        options,
        address,
        &mut board,
        console,
        stop,
        flash.as_mut(),
        started,
    )
}

/// Opens `options`' line and bridges `station`, whose firmware takes
/// `address`, to it.
fn connect<S: Station>(
    options: &FirmwareOptions,
    address: AddressChoice,
    station: &mut S,
    console: &mut impl Write,
    stop: &AtomicBool,
    flash: Option<&mut FlashFile<'_>>,
    started: impl FnOnce(&Connected, AddressChoice),
) -> Result<(), BridgeError> {
    match &options.line {
        LineChoice::Tap(name) => {
            let mut tap = Tap::open(name).map_err(BridgeError::Tap)?;
            let mut reader = tap.reader().map_err(BridgeError::Receive)?;
            started(&Connected::Tap(tap.name().into()), address);
            let incoming = listen(move || reader.next_frame());
            bridge(station, &mut tap, &incoming, console, stop, flash)
        }
        LineChoice::Udp(listen_on) => {
            let AddressChoice::Static(address) = address else {
                return Err(BridgeError::NoDhcpServer);
            };
            let mut gateway =
                UdpGateway::open(*listen_on, address).map_err(BridgeError::Gateway)?;
            let listener = gateway.listener().map_err(BridgeError::Receive)?;
            let local = gateway.local_addr().map_err(BridgeError::Receive)?;
            started(
                &Connected::Udp {
                    local,
                    host: gateway.host(),
                },
                AddressChoice::Static(address),
            );
            let incoming = listen(move || UdpGateway::next_datagram(&listener));
            bridge(station, &mut gateway, &incoming, console, stop, flash)
        }
    }
}

/// A thread that calls `next` until it fails or nobody listens, handing
/// over what it returns.
fn listen<T: Send + 'static>(
    mut next: impl FnMut() -> io::Result<T> + Send + 'static,
) -> Receiver<io::Result<T>> {
    let (arrivals, incoming) = mpsc::channel();
    // The thread blocks in the line's read; it ends with the process, or
    // when the bridge has gone and its next arrival has nowhere to go.
    thread::spawn(move || loop {
        let arrival = next();
        let failed = arrival.is_err();
        if arrivals.send(arrival).is_err() || failed {
            return;
        }
    });
    incoming
}

/// The flash part a `--flash` file holds: erased where the file ends,
/// all erased if there is no file yet.
fn stored_flash(path: &Path) -> Result<NorFlash, BridgeError> {
    let failed = |source| BridgeError::Flash {
        path: path.to_owned(),
        source,
    };
    let contents = match std::fs::read(path) {
        Ok(contents) => contents,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(failed(e)),
    };
    let geometry = Geometry::W25Q32;
    if contents.len() > geometry.capacity() {
        return Err(failed(io::Error::other(format!(
            "{} bytes, more than the {}-byte part holds",
            contents.len(),
            geometry.capacity()
        ))));
    }
    Ok(NorFlash::with_contents(
        geometry,
        Timing::TYPICAL,
        &contents,
    ))
}

/// Where the board's flash is kept, and how far it has been saved.
pub struct FlashFile<'a> {
    path: &'a Path,
    saved_writes: u64,
}

impl FlashFile<'_> {
    /// Writes the part's array to the file (whole, through a temporary
    /// file renamed over it) if it was programmed or erased since the last
    /// save and no operation is under way.
    fn save(&mut self, board: &IssBoard) -> Result<(), BridgeError> {
        let flash = board.flash();
        if flash.writes() == self.saved_writes || flash.busy() {
            return Ok(());
        }
        let failed = |source| BridgeError::Flash {
            path: self.path.to_owned(),
            source,
        };
        let temporary = self.path.with_extension("partial");
        std::fs::write(&temporary, flash.contents()).map_err(failed)?;
        std::fs::rename(&temporary, self.path).map_err(failed)?;
        self.saved_writes = flash.writes();
        Ok(())
    }
}

/// Runs `station` with its MAC on `line` until `stop` is set, copying the
/// firmware's console output (and what else the station reports) to
/// `console` and keeping its flash in `flash`.
pub fn bridge<L: Line, S: Station>(
    station: &mut S,
    line: &mut L,
    incoming: &Receiver<io::Result<L::Arrival>>,
    console: &mut impl Write,
    stop: &AtomicBool,
    mut flash: Option<&mut FlashFile<'_>>,
) -> Result<(), BridgeError> {
    while !stop.load(Ordering::Relaxed) {
        let wait = station.run_slice();
        forward(station.board(), line, console)?;
        station.report(console).map_err(BridgeError::Console)?;
        if let Some(flash) = flash.as_deref_mut() {
            flash.save(station.board())?;
        }
        match wait {
            None => deliver_waiting(station.board(), line, incoming)?,
            Some(wait) => {
                let started = Instant::now();
                let next = incoming.recv_timeout(wait.min(MAX_WAIT));
                station.advance(started.elapsed());
                match next {
                    Ok(arrival) => {
                        deliver(
                            station.board(),
                            line,
                            arrival.map_err(BridgeError::Receive)?,
                        );
                        deliver_waiting(station.board(), line, incoming)?;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(BridgeError::Receive(listener_gone()));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Hands what `arrival` makes to the MAC. A frame the MAC drops (ring
/// full, not for it) is lost on the line too, as on a board.
fn deliver<L: Line>(board: &IssBoard, line: &mut L, arrival: L::Arrival) {
    if let Some(frame) = line.frame(arrival, board.mac().station_address()) {
        board.mac().receive(&frame);
    }
}

/// Hands everything the line has already brought to the MAC.
fn deliver_waiting<L: Line>(
    board: &IssBoard,
    line: &mut L,
    incoming: &Receiver<io::Result<L::Arrival>>,
) -> Result<(), BridgeError> {
    loop {
        match incoming.try_recv() {
            Ok(arrival) => deliver(board, line, arrival.map_err(BridgeError::Receive)?),
            Err(TryRecvError::Empty) => return Ok(()),
            Err(TryRecvError::Disconnected) => return Err(BridgeError::Receive(listener_gone())),
        }
    }
}

/// Puts the frames the firmware transmitted on the line (and hands back
/// what the line answers at once), and prints what it wrote on its console.
fn forward<L: Line>(
    board: &IssBoard,
    line: &mut L,
    console: &mut impl Write,
) -> Result<(), BridgeError> {
    for frame in board.mac().take_transmitted() {
        if let Some(answer) = line.transmit(&frame).map_err(BridgeError::Send)? {
            board.mac().receive(&answer);
        }
    }
    let printed = board.console().take_transmitted();
    if !printed.is_empty() {
        console.write_all(&printed).map_err(BridgeError::Console)?;
        console.flush().map_err(BridgeError::Console)?;
    }
    Ok(())
}

fn listener_gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the line's listener stopped")
}
