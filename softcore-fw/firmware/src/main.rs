//! The firmware of weft's RISC-V soft core.
//!
//! It runs the fabric manager (`weft-fabric`) against the real hardware:
//! drivers for the data plane's CSR window, the config mailbox, the timer,
//! UART, flash and Ethernet MAC, and the smoltcp management server. It is
//! built for `riscv32im-unknown-none-elf` by `cargo xtask firmware`.
//!
//! # What runs today
//!
//! After its banner the firmware brings up the management port and says
//! so on the console, one line per step: the PHY where the board's needs
//! setting up over MDIO ([`phy`]: the VCU118's DP83867), the MAC ([`mac`]) with its
//! station address, smoltcp's interface with its IPv4 address — the
//! setting the console's `ip` command stored in flash ([`netstore`]): a
//! static address with an optional default gateway, or a DHCP server's
//! lease ([`addressing`]); [`DEFAULT_ADDRESS`] while none is stored or the
//! stored one is damaged, which the console says — and which answers ARP
//! and ICMP echo on its own, and the UDP management server ([`management`])
//! on weft-proto's port 7330.
//!
//! Then the fabric manager ([`fabric`]): configured from built-in settings
//! and the host ports and NumVFs of the configuration saved in flash (the
//! console's `host` command, `weftctl config save`) over the data plane's
//! CSR window, started (enumeration, routes, tables)
//! by the main loop 100 ms after reset, when it says on the console how
//! many functions it found and the instructions and cycles that took. From
//! then on it answers the hosts' configuration requests from the config
//! mailbox, and the management server's requests (topology, bind, unbind,
//! ...) through weft-fabric's request handler. Without a weft data plane
//! at the CSR window the firmware says so and runs the network only,
//! answering Ping and Identify and refusing everything else with
//! weft-proto's `Unsupported`.
//!
//! # Keys and the console
//!
//! Requests are checked with HMAC-SHA-256 under the switch's key and a
//! replay counter, exactly as every weft server does (`weft_proto::Responder`).
//! A new board starts without a key and answers no request until one is
//! provisioned on the UART console ([`console`]), a local, physical path:
//!
//! - `key <64 hex digits>` sets the key (generate one with `openssl rand -hex 32`)
//!   and stores it in the configuration flash ([`flash`], [`keystore`]) with the
//!   replay counter's high-water mark, so the next start uses it and refuses
//!   requests captured before the restart;
//! - `insecure` uses the publicly known insecure key — only when asked for by name,
//!   and only until the next restart;
//! - `ip <a.b.c.d/prefix>` sets a static management address, `ip
//!   <a.b.c.d/prefix> via <g.h.i.j>` one with a default route through the
//!   gateway (on the subnet), `ip dhcp` has a DHCP server lease it (and the
//!   router); each is stored in flash ([`netstore`]) and applied at every
//!   start, and the console says each lease and each loss of one; `ip`
//!   alone shows the setting and the lease;
//! - `help` lists them.
//!
//! # Firmware update
//!
//! An image sent with `weftctl firmware update` goes to the image slot of
//! the configuration flash that the running image is not from
//! (`weft_drivers::spi_flash` has the layout), is hashed whole as the flash holds it and committed in
//! two phases; weft-fabric's `firmware_update` has the rules, and its
//! `boot_image` the image format (`cargo xtask firmware` writes
//! `weft-firmware.img`). After each reset the boot loader in the boot ROM
//! (`softcore-fw/boot`) picks the slot from the boot record, checks and
//! copies its image and starts it with a handoff in `a1` that names the
//! slot the firmware runs from (or the bitstream's image when no slot
//! holds a valid one), so the firmware does not pick again. Started
//! without a handoff (an ELF loaded directly, as the simulator's boards
//! do), it picks the slot from the boot record itself, as the loader
//! would. The running image checks in on the first pass of the main loop
//! after its fabric's start, which makes a trial the good image and
//! disarms the watchdog the loader armed for the trial
//! (`weft_fabric::firmware_update::TRIAL_CHECK_IN_MS`).
//!
//! Measured on the ISS board (one instruction per 125 MHz cycle; the core
//! runs the firmware at CPI 1.12) with the firmware's own 307 KiB ELF as
//! the image: a chunk is answered after 0.30 M instructions (4 ms), one
//! that enters a new sector after 0.84 M (49 ms, mostly the part's
//! erase), and the last, which reads the whole image back and hashes it,
//! after 32.5 M (260 ms; about 103 instructions a byte). A whole 1 MiB
//! slot would hold the last answer about 0.9 s, past weftctl's 500 ms per
//! try: its resends of the same datagram wait in the socket and are
//! answered from the reply cache.
//!
//! # The main loop
//!
//! The loop never spins: it reads the console, shows the ports' links on
//! the LEDs ([`links`]), starts the fabric when it
//! is due and answers the hosts' configuration requests waiting in the
//! mailbox, lets smoltcp handle what arrived and send what is due (the
//! DHCP client's messages among it), applies a lease or the loss of one,
//! answers the management requests, moves queued console text to the UART
//! ([`uart`]: printing never holds the loop up), then sets the timer for
//! the next deadline (smoltcp's, the fabric's start, the UART's FIFO
//! emptying while text is queued, or the next look at the console,
//! [`CONSOLE_PERIOD`]) and waits in `wfi` until the timer or the machine
//! external interrupt wakes it. The external interrupt is the level OR of
//! the MAC's and the data plane's (a TLP in the mailbox, or one the
//! injector dropped, once the fabric runs: [`fabric`]), so a host's
//! configuration request is answered as soon as it arrives, not at the
//! next alarm. The interrupts are enabled in `mie` but never globally
//! (`mstatus.MIE` stays clear), so they wake `wfi` without a trap
//! (Privileged 20211203 §3.3.3) and there is no interrupt handler: the
//! pass of the loop after a wake is the handler, and it looks at every
//! source, the mailbox and the injector ([`fabric::Fabric::serve_hosts`])
//! and the MAC (acknowledged, then smoltcp polls it). Each source's line
//! is level-sensitive and lowered by that work, so an event that arrives
//! during the pass keeps its line high and the next `wfi` returns at once.
//!
//! # Memory
//!
//! Rodata lives in the data memory: the core is Harvard, and its instruction
//! memory is not readable by loads. Every buffer is a static of a fixed
//! size, so the budget is the link map's. With the network stack and the
//! fabric manager and the flash driver (`cargo xtask firmware`, measured
//! before the flash driver joined): 136 KiB of code in the 256 KiB
//! instruction memory; in the data memory (128 KiB then, 256 KiB since
//! the deepest stack overran what 128 KiB left) 15.8 KiB of rodata,
//! 21.5 KiB of data (the fabric manager's state, initialised where it
//! lies: rodata and data share the data memory; 38.7 KiB since the
//! manager's capacities grew to 16 switches and 128 functions, leaving
//! 49 KiB for stack and heap) and 17.6 KiB of bss — the
//! management server's reply cache 6.0 KiB, the UDP socket's buffers
//! 5.8 KiB (two datagrams each way), the MAC's receive and transmit frames
//! 3.0 KiB, a request and its answer 2.9 KiB. The stack went 46 KiB deep
//! on the ISS as the reference fabric's manager through enumeration, two
//! binds and a host's boot; `weft-sim`'s `firmware_reference_fabric`
//! measures it on every run (the ISS board paints the free memory) and
//! fails if it comes within 8 KiB of the statics. The flash driver and the
//! key record took 7.3 KiB of code and rodata; firmware update (the
//! update's state machine, the boot record, the image's SHA-256) 8.9 KiB
//! of code (text 180 960 → 190 120 bytes). smoltcp's DHCP client took
//! 12.8 KiB of code and rodata and 280 bytes of data, the second socket's
//! slot (text 229 380 → 242 432 bytes, data 41 016 → 41 296, bss
//! unchanged at 18 233). Keeping the network setting in flash, with the
//! gateway and the `ip` display, took 6.0 KiB of code and rodata (text
//! 245 756 → 251 896 bytes, data and bss unchanged). Before the network stack
//! the firmware was 652 bytes of code and nothing else.
//!
//! A host build of this crate (as `cargo test --workspace` makes) is only a
//! pointer to the real build, so the workspace stays one `cargo` command.
//!
//! Register accesses are the only `unsafe` code: the SoC window's volatile
//! load and store ([`mmio`]), enabling the two interrupt sources in `mie`,
//! and masking the external one while the flash driver sleeps between polls.
#![cfg_attr(target_os = "none", no_std, no_main)]
#![deny(unsafe_code)]

#[cfg(target_os = "none")]
pub mod addressing;
#[cfg(target_os = "none")]
pub mod board;
#[cfg(target_os = "none")]
pub mod console;
#[cfg(target_os = "none")]
pub mod fabric;
#[cfg(target_os = "none")]
pub mod flash;
#[cfg(target_os = "none")]
pub mod keystore;
#[cfg(target_os = "none")]
pub mod links;
#[cfg(target_os = "none")]
pub mod mac;
#[cfg(target_os = "none")]
pub mod management;
#[cfg(target_os = "none")]
pub mod mmio;
#[cfg(target_os = "none")]
pub mod netstore;
#[cfg(target_os = "none")]
pub mod phy;
#[cfg(target_os = "none")]
pub mod timer;
#[cfg(target_os = "none")]
pub mod uart;

#[cfg(target_os = "none")]
pub use soft_core::{CONSOLE_PERIOD, DEFAULT_ADDRESS, STATION_ADDRESS, SWITCH_ID};

#[cfg(target_os = "none")]
mod soft_core {
    use core::fmt::Write;
    use core::panic::PanicInfo;

    use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet, SocketStorage};
    use smoltcp::socket::udp;
    use smoltcp::time::Duration;
    use smoltcp::wire::{EthernetAddress, HardwareAddress, Ipv4Address, Ipv4Cidr};
    use static_cell::{ConstStaticCell, StaticCell};
    use weft_fabric::inventory::Function;
    use weft_proto::{Request, Response, SwitchId, DEFAULT_IPV4_ADDRESS, DEFAULT_IPV4_PREFIX_LEN};

    use weft_fabric::boot_image::Handoff;
    use weft_fabric::firmware_update::{self, BootKind, FirmwareUpdate};
    use weft_fabric::limits::{MAX_FUNCTIONS, MAX_HOST_PORTS, MAX_SLOTS_PER_HOST};
    use weft_fabric::manager::FabricManager;
    use weft_fabric::settings::{HostPort, HostPortError};
    use weft_proto::ImageSlot;

    use crate::addressing::{cidr, Addressing, Change, Lease};
    use crate::console::{Command, CommandError, Console, HELP};
    use crate::fabric::{Fabric, HostsError, LinkChanges, Phase, Started};
    use crate::flash::{
        self, describe, Region, BOOT_RECORD_REGION, IMAGE_A_REGION, IMAGE_B_REGION, KEY_REGION,
        NETWORK_REGION, STAGING_REGION,
    };
    use crate::keystore;
    use crate::links;
    use crate::mac::Mac;
    use crate::management::{self, Management, MANAGEMENT_UDP_PORT, MAX_DATAGRAM};
    use crate::netstore;
    use crate::timer;
    use crate::uart::Uart;
    use weft_fabric::network_setting::{NetworkSetting, StaticAddress};
    use weft_fabric::persist::Saved;

    /// The line the firmware prints on the console when it starts.
    const BANNER: &str = concat!("weft firmware ", env!("CARGO_PKG_VERSION"), "\r\n");

    /// The management port's station address: locally administered (bit 1
    /// of the first byte, IEEE 802 §8.3), then "WEFT" and 01.
    pub const STATION_ADDRESS: EthernetAddress =
        EthernetAddress([0x02, 0x57, 0x45, 0x46, 0x54, 0x01]);

    /// The switch's identity, which requests name: its station address as a 48-bit number.
    pub const SWITCH_ID: SwitchId = SwitchId(0x0257_4546_5401);

    /// The management port's IPv4 address until the console's `ip` command
    /// stores another setting: weft-proto's default for every switch.
    pub const DEFAULT_ADDRESS: Ipv4Cidr = {
        let [a, b, c, d] = DEFAULT_IPV4_ADDRESS;
        Ipv4Cidr::new(Ipv4Address::new(a, b, c, d), DEFAULT_IPV4_PREFIX_LEN)
    };

    /// [`DEFAULT_ADDRESS`] without a gateway: the setting while none is stored.
    const DEFAULT_SETTING: StaticAddress = match StaticAddress::new(
        DEFAULT_ADDRESS.address(),
        DEFAULT_ADDRESS.prefix_len(),
        None,
    ) {
        Ok(fixed) => fixed,
        Err(_) => panic!("weft-proto's default is a valid address"),
    };

    /// The longest the loop sleeps before looking at the console again:
    /// the UART has no interrupt, and a typed line should get its answer
    /// without a noticeable wait.
    pub const CONSOLE_PERIOD: Duration = Duration::from_millis(20);

    /// Datagrams each direction of the management socket holds.
    const UDP_PACKETS: usize = 2;

    static MAC: ConstStaticCell<Mac> = ConstStaticCell::new(Mac::new());
    /// The management server's socket and, while the address comes from
    /// DHCP, the DHCP client's.
    static SOCKETS: ConstStaticCell<[SocketStorage<'static>; 2]> =
        ConstStaticCell::new([SocketStorage::EMPTY; 2]);
    static UDP_RX_META: ConstStaticCell<[udp::PacketMetadata; UDP_PACKETS]> =
        ConstStaticCell::new([udp::PacketMetadata::EMPTY; UDP_PACKETS]);
    static UDP_RX: ConstStaticCell<[u8; UDP_PACKETS * MAX_DATAGRAM]> =
        ConstStaticCell::new([0; UDP_PACKETS * MAX_DATAGRAM]);
    static UDP_TX_META: ConstStaticCell<[udp::PacketMetadata; UDP_PACKETS]> =
        ConstStaticCell::new([udp::PacketMetadata::EMPTY; UDP_PACKETS]);
    static UDP_TX: ConstStaticCell<[u8; UDP_PACKETS * MAX_DATAGRAM]> =
        ConstStaticCell::new([0; UDP_PACKETS * MAX_DATAGRAM]);
    static DATAGRAM: ConstStaticCell<[u8; MAX_DATAGRAM]> = ConstStaticCell::new([0; MAX_DATAGRAM]);
    static ANSWER: ConstStaticCell<[u8; MAX_DATAGRAM]> = ConstStaticCell::new([0; MAX_DATAGRAM]);
    /// Built at start rather than as an initialised static, so its reply
    /// cache is zeroed memory (bss) and not a copy carried by the image.
    static MANAGEMENT: StaticCell<Management> = StaticCell::new();
    /// The fabric manager's state, in place: built on the stack and moved,
    /// it and its copies would outgrow the data memory. An initialised
    /// static (data), as weft-fabric's size probe holds it: written at
    /// start into bss instead, its initial value would be a constant of the
    /// same size in rodata, since `FabricManager::EMPTY` is not all zeros.
    static FABRIC_MANAGER: ConstStaticCell<FabricManager> =
        ConstStaticCell::new(FabricManager::EMPTY);

    /// The management server's socket and buffers.
    struct Server {
        sockets: SocketSet<'static>,
        udp: SocketHandle,
        management: &'static mut Management,
        datagram: &'static mut [u8; MAX_DATAGRAM],
        answer: &'static mut [u8; MAX_DATAGRAM],
    }

    impl Server {
        /// Answers the oldest datagram waiting, from `fabric` if there is
        /// one, and stores the replay high-water mark in `key_flash`;
        /// whether there was a datagram.
        fn serve_one(
            &mut self,
            uart: &mut Uart,
            key_flash: &mut Region,
            fabric: Option<&mut Fabric>,
        ) -> bool {
            let socket = self.sockets.get_mut::<udp::Socket>(self.udp);
            loop {
                match socket.recv_slice(&mut self.datagram[..]) {
                    Ok((len, meta)) => {
                        let datagram = &self.datagram[..len];
                        let n = self.management.answer(datagram, self.answer, fabric);
                        if let Err(error) = self.management.keep_mark(key_flash) {
                            let _ = write!(
                                uart,
                                "flash: the replay high-water mark was not stored ({}); \
                                 after a restart, requests from before it may be accepted again\r\n",
                                describe(error)
                            );
                        }
                        if n > 0 {
                            // A full send buffer loses the answer; the client retries.
                            let _ = socket.send_slice(&self.answer[..n], meta);
                        }
                        return true;
                    }
                    // Longer than any weft datagram: dropped, look at the next.
                    Err(udp::RecvError::Truncated) => continue,
                    Err(udp::RecvError::Exhausted) => return false,
                }
            }
        }
    }

    /// The firmware's main loop (see the crate docs).
    ///
    /// `handoff` is `a1` at the entry: the boot loader's [`Handoff`], or
    /// anything else when the image was started directly.
    #[riscv_rt::entry]
    fn main(_hart_id: usize, handoff: usize, _a2: usize) -> ! {
        let mut uart = Uart::console();
        uart.write_bytes(BANNER.as_bytes());

        // The PHY first: the VCU118's gives the SGMII clock only once set up.
        crate::phy::bring_up(&mut uart);
        let mac = MAC.take();
        mac.start(STATION_ADDRESS);
        let _ = write!(uart, "mac: station address {STATION_ADDRESS}\r\n");

        let mut config = Config::new(HardwareAddress::Ethernet(STATION_ADDRESS));
        // smoltcp draws DHCP transaction IDs and ports from this: boards
        // differ by station address, starts of one board by the time the
        // start took.
        config.random_seed = SWITCH_ID.0 ^ timer::ticks();
        let mut iface = Interface::new(config, mac, timer::now());

        let mut sockets = SocketSet::new(&mut SOCKETS.take()[..]);
        let mut socket = udp::Socket::new(
            udp::PacketBuffer::new(&mut UDP_RX_META.take()[..], &mut UDP_RX.take()[..]),
            udp::PacketBuffer::new(&mut UDP_TX_META.take()[..], &mut UDP_TX.take()[..]),
        );
        // A fresh socket binds to any port but 0.
        let _ = socket.bind(MANAGEMENT_UDP_PORT);
        let udp = sockets.add(socket);
        let mut server = Server {
            sockets,
            udp,
            management: MANAGEMENT.init(Management::new(SWITCH_ID)),
            datagram: DATAGRAM.take(),
            answer: ANSWER.take(),
        };
        flash::configure();
        let mut network_flash = NETWORK_REGION;
        let mode = stored_address(&mut uart, &mut network_flash);
        let mut addressing = Addressing::start(mode, &mut iface, &mut server.sockets);
        say_address(&mut uart, mode);
        let mut key_flash = KEY_REGION;
        let _ = match keystore::load(&mut key_flash) {
            Ok(Some(stored)) => {
                server.management.resume(stored);
                write!(
                    uart,
                    "management: udp port {MANAGEMENT_UDP_PORT}; key from flash, requests \
                     are authenticated\r\n"
                )
            }
            Ok(None) => write!(
                uart,
                "management: udp port {MANAGEMENT_UDP_PORT}; no key yet, so no request is \
                 answered: type `key <64 hex digits>` (or `insecure`)\r\n"
            ),
            Err(error) => write!(
                uart,
                "management: udp port {MANAGEMENT_UDP_PORT}; the flash could not be read \
                 ({}), so no key: type `key <64 hex digits>` (or `insecure`)\r\n",
                describe(error)
            ),
        };

        let mut fabric = match Fabric::new(FABRIC_MANAGER.take(), SWITCH_ID.0) {
            Ok(fabric) => {
                let _ = write!(
                    uart,
                    "fabric: {} ports; enumeration 100 ms after reset",
                    fabric.ports()
                );
                if let Some(up) = links::up() {
                    say_links_up(&mut uart, up, fabric.ports());
                }
                uart.write_bytes(b"\r\n");
                Some(fabric)
            }
            Err(_) => {
                uart.write_bytes(b"fabric: no weft data plane at the CSR window; network only\r\n");
                None
            }
        };

        // The flash driver sleeps between polls until the timer wakes it:
        // interrupts first, then the boot record.
        wake_on_interrupts();
        match start_firmware_update(Handoff::decode(handoff as u32)) {
            Ok((start, update)) => {
                say_boot(&mut uart, &start);
                server.management.serve_firmware(update);
            }
            Err(error) => {
                let _ = write!(
                    uart,
                    "firmware: the boot record could not be read ({}); no firmware update \
                     until a restart\r\n",
                    describe(error)
                );
            }
        }

        uart.write_bytes(b"ready\r\n");
        uart.send_in_background();

        let mut console = Console::new();
        let mut checked_in = false;
        loop {
            while let Some(command) = console.poll(&mut uart) {
                run(
                    command,
                    &mut uart,
                    &mut iface,
                    &mut server,
                    &mut addressing,
                    &mut key_flash,
                    fabric.as_mut(),
                );
            }
            links::show_on_leds();
            if let Some(fabric) = &mut fabric {
                if let Some(started) = fabric.start_when_due() {
                    report(&mut uart, &started);
                }
                say_link_changes(&mut uart, fabric.log_link_changes());
                if let Some(drops) = fabric.serve_hosts() {
                    let _ = write!(
                        uart,
                        "fabric: the injector dropped a TLP sent (malformed: {}, no such port: {})\r\n",
                        drops.malformed, drops.no_such_port
                    );
                }
            }
            mac.acknowledge_interrupt();
            iface.poll(timer::now(), mac, &mut server.sockets);
            if let Some(change) = addressing.poll(&mut iface, &mut server.sockets) {
                say_change(&mut uart, &change);
            }
            while server.serve_one(&mut uart, &mut key_flash, fabric.as_mut()) {
                iface.poll(timer::now(), mac, &mut server.sockets);
            }
            // Up: every part of the loop ran and the fabric's start is over.
            if !checked_in && fabric.as_ref().is_none_or(|f| f.phase() != Phase::Waiting) {
                check_in(&mut uart, server.management);
                checked_in = true;
            }
            uart.pump();
            let fabric_wake = fabric.as_mut().and_then(Fabric::next_wake);
            let delay = iface
                .poll_delay(timer::now(), &server.sockets)
                .map_or(CONSOLE_PERIOD, |d| d.min(CONSOLE_PERIOD))
                .min(fabric_wake.unwrap_or(CONSOLE_PERIOD))
                .min(uart.refill_after().unwrap_or(CONSOLE_PERIOD));
            timer::alarm_after(delay);
            riscv::asm::wfi();
        }
    }

    /// Says which ports' links went up or down since the last pass; a link
    /// up where the start found nothing is not enumerated (PCIe hot-add is
    /// not done), and the line says how to have it enumerated.
    fn say_link_changes(uart: &mut Uart, changes: LinkChanges) {
        for port in 0..32 {
            let bit = 1u32 << port;
            if changes.down & bit != 0 {
                let _ = write!(uart, "link: port {port} down\r\n");
            } else if changes.up & bit != 0 {
                let _ = write!(uart, "link: port {port} up\r\n");
            } else if changes.up_unenumerated & bit != 0 {
                let _ = write!(
                    uart,
                    "link: port {port} up; nothing was there when the fabric started, so it is \
                     enumerated only when the firmware restarts (`weftctl reset`, or a reset of \
                     the board)\r\n"
                );
            }
        }
    }

    /// Says which ports' links the board shows up, for the start's wait.
    fn say_links_up(uart: &mut Uart, up: u32, ports: usize) {
        let _ = write!(uart, " and 100 ms after each link comes up; links up:");
        let mut any = false;
        for port in (0..ports.min(32)).filter(|p| up >> p & 1 == 1) {
            let _ = write!(uart, " {port}");
            any = true;
        }
        if !any {
            let _ = write!(uart, " none");
        }
    }

    /// Carries out a console command and says what it did.
    fn run(
        command: Result<Command, CommandError>,
        uart: &mut Uart,
        iface: &mut Interface,
        server: &mut Server,
        addressing: &mut Addressing,
        key_flash: &mut Region,
        fabric: Option<&mut Fabric>,
    ) {
        let management = &mut *server.management;
        let _ = match command {
            Ok(Command::Key(key)) => match management.set_key(key, key_flash) {
                Ok(()) => {
                    uart.write_str("key: set and stored in flash; requests are authenticated\r\n")
                }
                Err(error) => write!(
                    uart,
                    "key: set, but not stored in flash ({}); requests are \
                     authenticated until the next restart\r\n",
                    describe(error)
                ),
            },
            Ok(Command::Insecure) => {
                management.set_insecure();
                uart.write_str(
                    "key: insecure public key until the next restart; anyone on the network \
                     can manage this switch\r\n",
                )
            }
            Ok(Command::Address(mode)) => {
                addressing.set(mode, iface, &mut server.sockets);
                say_address(uart, mode);
                // A region is only its span and the bus: a handle, made where used.
                let mut network_flash = NETWORK_REGION;
                match netstore::store(&mut network_flash, &mode) {
                    Ok(()) => uart.write_str("ip: stored in flash; the next start uses it too\r\n"),
                    Err(error) => write!(
                        uart,
                        "ip: not stored in flash ({}); the next start uses the previous setting\r\n",
                        describe(error)
                    ),
                }
            }
            Ok(Command::ShowAddress) => {
                show_address(uart, addressing);
                Ok(())
            }
            Ok(Command::Hosts) => match fabric {
                Some(fabric) => say_hosts(uart, fabric.next_hosts()),
                None => uart.write_str("hosts: no data plane, so no host ports\r\n"),
            },
            Ok(Command::Host(edit)) => match fabric {
                Some(fabric) => say_hosts(uart, fabric.edit_hosts(edit)),
                None => uart.write_str("host: no data plane, so no host ports\r\n"),
            },
            Ok(Command::Functions) => match fabric {
                Some(fabric) => say_functions(uart, fabric.functions()),
                None => uart.write_str("functions: no data plane, so no fabric\r\n"),
            },
            Ok(Command::Fabric(request)) => {
                let name = match request {
                    Request::Bind { .. } => "bind",
                    _ => "unbind",
                };
                match fabric {
                    Some(fabric) => {
                        // The console is the local, physical path: an
                        // authenticated client.
                        let board = management::board_info(fabric.ports(), true);
                        say_answer(uart, name, fabric.answer(&board, &request, &[], None))
                    }
                    None => write!(uart, "{name}: no data plane, so no fabric\r\n"),
                }
            }
            Ok(Command::Help) => uart.write_str(HELP),
            Err(CommandError::Unknown) => uart.write_str("unknown command; type `help`\r\n"),
            Err(CommandError::Bind) => {
                uart.write_str("bind: expected `bind <bb:dd.f> <host> <slot>`\r\n")
            }
            Err(CommandError::Function(error)) => write!(uart, "bind: the function is {error}\r\n"),
            Err(CommandError::Unbind) => uart.write_str(
                "unbind: expected `unbind <host> <slot> [graceful|managed|surprise]`\r\n",
            ),
            Err(CommandError::Key(error)) => write!(uart, "key: {error}\r\n"),
            Err(CommandError::Address) => uart.write_str(
                "ip: expected an address and prefix length, such as 192.168.70.2/24, \
                 optionally `via` a gateway, such as 192.168.70.2/24 via 192.168.70.1, or dhcp\r\n",
            ),
            Err(CommandError::Host) => uart.write_str(
                "host: expected `host [<switch>:]<port> <slots>` or \
                     `host remove [<switch>:]<port>`\r\n",
            ),
            Err(CommandError::Static(error)) => write!(uart, "ip: {error}; nothing changed\r\n"),
            Err(CommandError::TooLong) => uart.write_str("line too long; nothing done\r\n"),
        };
    }

    /// The longest line [`say_functions`] prints: `bb:dd.f vvvv:dddd
    /// class cccccc switch 255 port 255: host 255 slot 255` and CR LF.
    const FUNCTION_LINE_BYTES: usize = 71;

    // A listing of the most functions the fabric holds, with `help` before
    // it, fits the console's queue: the main loop never waits for the line.
    const _: () =
        assert!(MAX_FUNCTIONS * FUNCTION_LINE_BYTES + HELP.len() <= crate::uart::TX_QUEUE_BYTES);

    /// Lists the fabric's functions on the console, one a line: fabric ID,
    /// vendor and device ID, class code, the switch port it is below, and
    /// its binding.
    fn say_functions(uart: &mut Uart, functions: &[Function]) -> core::fmt::Result {
        if functions.is_empty() {
            return uart.write_str("functions: none found\r\n");
        }
        for f in functions {
            write!(
                uart,
                "{} {:04x}:{:04x} class {:06x} switch {} port {}: ",
                f.id, f.vendor_id, f.device_id, f.class_code, f.switch.0, f.port.0
            )?;
            match f.binding {
                Some(b) => write!(uart, "host {} slot {}\r\n", b.host.0, b.slot)?,
                None => uart.write_str("unbound\r\n")?,
            }
        }
        Ok(())
    }

    /// Says on the console how a `bind` or `unbind` went.
    fn say_answer(uart: &mut Uart, name: &str, answer: Response) -> core::fmt::Result {
        match answer {
            Response::Done => write!(uart, "{name}: done\r\n"),
            Response::InProgress { op } => write!(
                uart,
                "{name}: under way (operation {}): the slot empties once the host lets the \
                 device go\r\n",
                op.0
            ),
            Response::Error(error) => write!(uart, "{name}: {error}\r\n"),
            _ => write!(uart, "{name}: an unexpected answer\r\n"),
        }
    }

    /// Says on the console which host ports the next start presents, or
    /// why they could not be read or changed (nothing changed then).
    fn say_hosts(
        uart: &mut Uart,
        hosts: Result<weft_proto::heapless::Vec<HostPort, MAX_HOST_PORTS>, HostsError>,
    ) -> core::fmt::Result {
        let hosts = match hosts {
            Ok(hosts) => hosts,
            Err(HostsError::NoFlash) => return uart.write_str("hosts: no configuration flash\r\n"),
            Err(HostsError::Flash(error)) => {
                return write!(uart, "hosts: {}; nothing changed\r\n", describe(error))
            }
            Err(HostsError::NoSuchPort { port, ports }) => {
                return write!(
                    uart,
                    "host: the switch has ports 0 to {}, not {port}; nothing changed\r\n",
                    ports - 1
                )
            }
            Err(HostsError::NoSuchSwitch(switch)) => {
                return write!(
                uart,
                "host: the fabric's last start found no switch {switch:012x}; nothing changed\r\n"
            )
            }
            Err(HostsError::Set(HostPortError::Slots(slots))) => {
                return write!(
                    uart,
                    "host: a virtual switch has 1 to {MAX_SLOTS_PER_HOST} slots, not {slots}; \
                     nothing changed\r\n"
                )
            }
            Err(HostsError::Set(HostPortError::Full)) => {
                return write!(
                    uart,
                    "host: {MAX_HOST_PORTS} host ports are set already; nothing changed\r\n"
                )
            }
            Err(HostsError::NotAHostPort { port }) => {
                return write!(
                    uart,
                    "host: port {port} is no host port; nothing changed\r\n"
                )
            }
        };
        write!(
            uart,
            "hosts: {} host port(s) from the next start (stored in flash)\r\n",
            hosts.len()
        )?;
        for host in &hosts {
            write!(
                uart,
                "  host {}: switch {:012x} port {}, {} slots\r\n",
                host.host.0, host.switch, host.port.0, host.slots
            )?;
        }
        Ok(())
    }

    /// The image slot this start runs, as the boot loader's `handoff`
    /// says, or, for an image started directly (no handoff), as the boot
    /// record picks it (`weft_fabric::firmware_update::boot`, which the
    /// loader runs otherwise); and the update of the other slot.
    fn start_firmware_update(
        handoff: Option<Handoff>,
    ) -> Result<(Handoff, FirmwareUpdate<Region>), weft_fabric::persist::PersistError> {
        let start = match handoff {
            Some(handoff) => handoff,
            None => {
                let mut boot_flash = BOOT_RECORD_REGION;
                let choice = firmware_update::boot(&mut boot_flash)?;
                Handoff {
                    chosen: choice.slot,
                    kind: choice.kind,
                    running: Some(choice.slot),
                }
            }
        };
        let images = [IMAGE_A_REGION, IMAGE_B_REGION];
        let running = start.running.unwrap_or(start.chosen);
        let mut update = FirmwareUpdate::new(images, BOOT_RECORD_REGION, STAGING_REGION, running)?;
        update.note_start(&start);
        Ok((start, update))
    }

    /// Marks the running image good, if it runs on trial, disarms the
    /// watchdog the boot loader armed for the trial (not a reset a request
    /// scheduled meanwhile), and says so: a trial that never gets here, or
    /// whose check-in is not stored, is reset by the watchdog and not
    /// started again.
    fn check_in(uart: &mut Uart, management: &mut Management) {
        let Some(update) = management.firmware() else {
            return;
        };
        let _ = match update.check_in() {
            Ok(true) => {
                weft_drivers::watchdog::disarm_if_armed_with(
                    &mut crate::mmio::Mmio,
                    weft_drivers::watchdog::load_for_ms(firmware_update::TRIAL_CHECK_IN_MS),
                );
                write!(
                    uart,
                    "firmware: slot {} checked in; it starts from now on\r\n",
                    slot_name(update.running())
                )
            }
            Ok(false) => Ok(()),
            Err(error) => write!(
                uart,
                "firmware: the check-in was not stored ({}); the next start (the \
                 watchdog's, for a trial) boots \
                 back to the previous image\r\n",
                describe(error)
            ),
        };
    }

    /// Says on the console which image slot this start runs, and why.
    fn say_boot(uart: &mut Uart, start: &Handoff) {
        let slot = slot_name(start.chosen);
        let _ = match (start.running, start.kind) {
            (None, _) => uart
                .write_str("firmware: the bitstream's image: neither slot holds a valid one\r\n"),
            (Some(running), _) if running != start.chosen => write!(
                uart,
                "firmware: slot {}: slot {slot} does not hold a valid image\r\n",
                slot_name(running)
            ),
            (Some(_), BootKind::Active) => write!(uart, "firmware: slot {slot}\r\n"),
            (Some(_), BootKind::Trial) => write!(uart, "firmware: slot {slot} on trial\r\n"),
            (Some(_), BootKind::Rollback) => write!(
                uart,
                "firmware: slot {slot} again: the trial never checked in\r\n"
            ),
        };
    }

    /// The slot's letter.
    fn slot_name(slot: ImageSlot) -> &'static str {
        match slot {
            ImageSlot::A => "A",
            ImageSlot::B => "B",
        }
    }

    /// Says on the console how the fabric's start went.
    fn report(uart: &mut Uart, started: &Started) {
        let _ = match started.result {
            Ok(()) => write!(
                uart,
                "fabric: {} functions enumerated in {} instructions, {} cycles\r\n",
                started.functions, started.instructions, started.cycles
            ),
            // Formatting the error would cost more code than the soft core has room for.
            Err(_) => uart.write_str("fabric: start failed; hosts are not answered\r\n"),
        };
        let _ = match started.restored {
            Some(Ok(restored)) => write!(
                uart,
                "fabric: {} bindings restored from flash, {} not (see the event log)\r\n",
                restored.bound, restored.not_restored
            ),
            Some(Err(_)) => uart.write_str("fabric: the saved bindings could not be restored\r\n"),
            None => Ok(()),
        };
    }

    /// The address mode stored in flash, or [`DEFAULT_ADDRESS`] when none
    /// is, or only a damaged one (which the console is told about), or the
    /// flash cannot be read.
    fn stored_address(uart: &mut Uart, network_flash: &mut Region) -> NetworkSetting {
        let default = NetworkSetting::Static(DEFAULT_SETTING);
        let _ = match netstore::load(network_flash) {
            Ok(Saved::Record(mode)) => {
                let _ = uart.write_str("ip: the setting stored in flash\r\n");
                return mode;
            }
            Ok(Saved::Empty) => return default,
            Ok(Saved::Corrupt) => uart.write_str(
                "ip: the setting stored in flash is damaged; the default address until \
                 `ip` stores another\r\n",
            ),
            Err(error) => write!(
                uart,
                "ip: the flash could not be read ({}); the default address\r\n",
                describe(error)
            ),
        };
        default
    }

    /// Says on the console where the management port's address comes from
    /// now, and under DHCP the lease it holds.
    fn show_address(uart: &mut Uart, addressing: &Addressing) {
        let _ = match (addressing.mode(), addressing.lease()) {
            (NetworkSetting::Dhcp, Some(Lease { address, router })) => match router {
                Some(router) => write!(uart, "ip: dhcp, {address} leased, router {router}\r\n"),
                None => write!(uart, "ip: dhcp, {address} leased, no router\r\n"),
            },
            (NetworkSetting::Dhcp, None) => uart.write_str("ip: dhcp, no lease yet\r\n"),
            (mode, _) => {
                say_address(uart, mode);
                Ok(())
            }
        };
    }

    /// Says on the console where the management port's address comes from now.
    fn say_address(uart: &mut Uart, mode: NetworkSetting) {
        let _ = match mode {
            NetworkSetting::Static(fixed) => match fixed.gateway() {
                Some(gateway) => write!(
                    uart,
                    "ip: {} via {gateway} (ARP, ICMP echo)\r\n",
                    cidr(&fixed)
                ),
                None => write!(
                    uart,
                    "ip: {}, no gateway (ARP, ICMP echo)\r\n",
                    cidr(&fixed)
                ),
            },
            NetworkSetting::Dhcp => {
                uart.write_str("ip: no address until a DHCP server leases one\r\n")
            }
        };
    }

    /// Says on the console what the DHCP client changed.
    fn say_change(uart: &mut Uart, change: &Change) {
        let _ = match change {
            Change::Leased {
                address,
                router: Some(router),
                server,
            } => write!(
                uart,
                "ip: {address} leased from {server}, router {router} (ARP, ICMP echo)\r\n"
            ),
            Change::Leased {
                address,
                router: None,
                server,
            } => write!(
                uart,
                "ip: {address} leased from {server}, no router (ARP, ICMP echo)\r\n"
            ),
            Change::Lost => {
                uart.write_str("ip: the DHCP lease ended; no address, asking again\r\n")
            }
        };
    }

    /// Lets the machine timer and external (MAC and data plane) interrupts
    /// end a `wfi`. `mstatus.MIE` stays clear, so neither ever traps
    /// (Privileged 20211203 §3.3.3: `wfi` resumes on any interrupt enabled
    /// in `mie`).
    #[allow(unsafe_code)]
    fn wake_on_interrupts() {
        // SAFETY: setting MTIE and MEIE in `mie` cannot cause a trap while
        // `mstatus.MIE` is clear, which nothing in the firmware sets.
        unsafe {
            riscv::register::mie::set_mtimer();
            riscv::register::mie::set_mext();
        }
    }

    /// A panic sends what the console has queued and halts the core; the
    /// watchdog then resets it.
    #[panic_handler]
    fn halt(_info: &PanicInfo) -> ! {
        crate::uart::flush();
        loop {
            core::hint::spin_loop();
        }
    }
}

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "weft-firmware runs on the weft soft core (riscv32im-unknown-none-elf); \
         build it with `cargo xtask firmware`"
    );
}
