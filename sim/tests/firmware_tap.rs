//! `weft-sim firmware` bridges the firmware on the ISS to a real Linux TAP
//! interface: Linux's own `ping` reaches the firmware's ICMP echo, and the
//! weftctl client gets its identity over the kernel's UDP stack; with
//! `--fabric`, weftctl binds a GPU through the firmware's network stack and
//! the simulated host's hot-plug driver finds it; with `--dhcp`, Linux's
//! dnsmasq leases the firmware its address, and `ping` and weftctl reach
//! it there.
//!
//! Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), `/dev/net/tun`, `ip`,
//! `ping` and, for the DHCP test, `dnsmasq` (`cargo xtask setup` installs
//! iputils-ping and dnsmasq-base); without them a test says why and skips. Everything happens in a network namespace of
//! its own, which is deleted, with the runner stopped, even when the test
//! fails.

mod firmware_support;

use std::fs::{File, OpenOptions};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use firmware_support::{
    firmware_path, test_key, FIRMWARE_IP, FIRMWARE_MAC, FIRMWARE_SWITCH, TEST_KEY_HEX,
};
use nix::sched::{setns, CloneFlags};
use weft_proto::{
    BoundFunctions, Capabilities, HostIndex, Request, Response, SlotIndex, SwitchId,
    MANAGEMENT_UDP_PORT,
};
use weftctl::client::{Client, ClientConfig};
use weftctl::topology::read_topology;

/// The TAP interface the runner creates inside the namespace.
const TAP: &str = "weft0";
/// The host's address on the TAP, on the firmware's default subnet.
const HOST_CIDR: &str = "192.168.70.1/24";
/// How long the runner may take to open its TAP.
const TAP_DEADLINE: Duration = Duration::from_secs(120);
/// The addresses dnsmasq leases, with their mask and lease time: none is
/// the firmware's default, so an answer from one is an answer from a
/// leased address.
const DHCP_RANGE: &str = "192.168.70.100,192.168.70.109,255.255.255.0,2m";
/// How long the firmware may take to be leased an address once dnsmasq
/// runs: its DHCP client sends a discover every 10 s, and one before the
/// server was up is lost.
const LEASE_DEADLINE: Duration = Duration::from_secs(60);

/// Why `tool` cannot be run, if it cannot: it did not start when asked
/// for its version with `version_flag`.
fn missing_tool(tool: &str, version_flag: &str, package: &str) -> Option<String> {
    let found = Command::new(tool)
        .arg(version_flag)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    (!found).then(|| format!("`{tool}` is not installed (cargo xtask setup installs {package})"))
}

/// Why the tests cannot run here, if they cannot.
fn missing_prerequisite() -> Option<String> {
    if OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .is_err()
    {
        return Some("cannot open /dev/net/tun (run as root, with the tun module)".into());
    }
    for (tool, package) in [("ip", "iproute2"), ("ping", "iputils-ping")] {
        if let Some(why) = missing_tool(tool, "-V", package) {
            return Some(why);
        }
    }
    if !firmware_path().is_file() {
        return Some(format!(
            "no firmware ELF at {} (build it with `cargo xtask firmware`)",
            firmware_path().display()
        ));
    }
    None
}

/// A network namespace with the runner (and, for the DHCP test, dnsmasq)
/// inside; dropping it stops them and deletes the namespace.
struct Lab {
    name: String,
    runner: Option<Child>,
    dhcp_server: Option<Child>,
}

impl Lab {
    /// A namespace of its own for the test called `test`.
    fn create(test: &str) -> Result<Lab, String> {
        let name = format!("weft-{test}-{}", std::process::id());
        // A namespace left by an earlier, killed run of this process id.
        let _ = run("ip", &["netns", "delete", &name]);
        run("ip", &["netns", "add", &name])?;
        Ok(Lab {
            name,
            runner: None,
            dhcp_server: None,
        })
    }

    /// `ip netns exec` arguments for `command` inside the namespace.
    fn exec<'a>(&'a self, command: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["netns", "exec", &self.name];
        args.extend_from_slice(command);
        args
    }

    /// Starts `weft-sim firmware` on the TAP with `extra` arguments.
    fn start_runner(&mut self, extra: &[&str]) -> Result<(), String> {
        let elf = firmware_path();
        let elf = elf.to_str().ok_or("the firmware path is not UTF-8")?;
        let log = File::create(self.log_path()).map_err(|e| e.to_string())?;
        let mut command = vec![
            env!("CARGO_BIN_EXE_weft-sim"),
            "firmware",
            "--elf",
            elf,
            "--tap",
            TAP,
            "--key",
            TEST_KEY_HEX,
        ];
        command.extend_from_slice(extra);
        let runner = Command::new("ip")
            .args(self.exec(&command))
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start weft-sim firmware: {e}"))?;
        self.runner = Some(runner);
        // The TAP exists once the runner has opened it (after a fabric's
        // enumeration and boot, with --fabric).
        let deadline = Instant::now() + TAP_DEADLINE;
        while run("ip", &self.exec(&["ip", "link", "show", TAP])).is_err() {
            if Instant::now() > deadline {
                return Err(format!(
                    "no {TAP} after {TAP_DEADLINE:?}; runner log:\n{}",
                    self.log()
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
        run(
            "ip",
            &self.exec(&["ip", "addr", "add", HOST_CIDR, "dev", TAP]),
        )?;
        run("ip", &self.exec(&["ip", "link", "set", TAP, "up"]))?;
        Ok(())
    }

    /// Starts dnsmasq as the DHCP server on the TAP (once the runner has
    /// it up with the host's address), leasing from [`DHCP_RANGE`], with
    /// no DNS and no files but its log and its lease file.
    fn start_dhcp_server(&mut self) -> Result<(), String> {
        let log = File::create(self.file("dnsmasq.log")).map_err(|e| e.to_string())?;
        let interface = format!("--interface={TAP}");
        let range = format!("--dhcp-range={DHCP_RANGE}");
        let leases = self.file("leases");
        let leases = format!("--dhcp-leasefile={}", leases.display());
        let command = [
            "dnsmasq",
            "--no-daemon",
            "--conf-file=/dev/null",
            "--port=0",
            "--pid-file=",
            "--log-dhcp",
            &interface,
            "--bind-interfaces",
            &range,
            &leases,
        ];
        let server = Command::new("ip")
            .args(self.exec(&command))
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start dnsmasq: {e}"))?;
        self.dhcp_server = Some(server);
        Ok(())
    }

    /// The address dnsmasq's lease file gives the firmware's station
    /// address, once it has one.
    fn leased_address(&self) -> Option<Ipv4Addr> {
        // One lease a line: expiry, station address, IPv4 address, host name, client ID.
        let leases = std::fs::read_to_string(self.file("leases")).ok()?;
        // smoltcp writes station addresses with dashes, dnsmasq with colons.
        let station = FIRMWARE_MAC.to_string().replace('-', ":");
        leases.lines().find_map(|lease| {
            let fields: Vec<&str> = lease.split_whitespace().collect();
            match fields[..] {
                [_, mac, ip, ..] if mac.eq_ignore_ascii_case(&station) => ip.parse().ok(),
                _ => None,
            }
        })
    }

    /// The runner's log, then dnsmasq's, for a failure's message.
    fn logs(&self) -> String {
        let dnsmasq = std::fs::read_to_string(self.file("dnsmasq.log")).unwrap_or_default();
        format!("runner log:\n{}\ndnsmasq log:\n{dnsmasq}", self.log())
    }

    /// A file of this namespace's in the temporary directory.
    fn file(&self, what: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("{}.{what}", self.name))
    }

    fn log_path(&self) -> std::path::PathBuf {
        self.file("log")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Runs `work` on a thread that has entered the namespace's network
    /// namespace, so its sockets use the namespace's interfaces.
    fn inside<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/var/run/netns/{}", self.name);
        thread::spawn(move || {
            let namespace = File::open(&path).expect("the namespace exists");
            setns(namespace, CloneFlags::CLONE_NEWNET).expect("setns into the namespace");
            work()
        })
        .join()
        .expect("the work inside the namespace did not panic")
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for mut child in [self.runner.take(), self.dhcp_server.take()]
            .into_iter()
            .flatten()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = run("ip", &["netns", "delete", &self.name]);
        for what in ["log", "dnsmasq.log", "leases"] {
            let _ = std::fs::remove_file(self.file(what));
        }
    }
}

/// Runs `program` with `args`; its standard output, or what went wrong.
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn linux_ping_and_weftctl_reach_the_firmware_through_a_tap() {
    if let Some(why) = missing_prerequisite() {
        eprintln!("skipped: {why}");
        return;
    }
    let mut lab = Lab::create("ping").expect("a network namespace");
    lab.start_runner(&[]).expect("the runner and its TAP");

    let target = FIRMWARE_IP.to_string();
    let ping = run("ip", &lab.exec(&["ping", "-c", "3", "-W", "5", &target]));
    let ping = ping.unwrap_or_else(|e| panic!("ping failed: {e}\nrunner log:\n{}", lab.log()));
    assert!(ping.contains("3 received"), "{ping}");

    let identity = lab.inside(|| {
        let switch = SocketAddr::new(IpAddr::V4(FIRMWARE_IP), MANAGEMENT_UDP_PORT);
        let key = test_key();
        let mut client = Client::connect(ClientConfig::new(switch, key)).expect("a UDP socket");
        client.identify()
    });
    let identity = identity.unwrap_or_else(|e| panic!("identify: {e}\nrunner log:\n{}", lab.log()));
    assert_eq!(identity.switch, SwitchId(FIRMWARE_SWITCH));
    assert_eq!(identity.board.as_str(), "weft-soc");
    assert!(identity.capabilities.contains(Capabilities::AUTHENTICATED));

    let log = lab.log();
    assert!(log.contains("key: set"), "{log}");
}

#[test]
fn weftctl_binds_a_gpu_through_a_tap_and_the_simulated_host_finds_it() {
    if let Some(why) = missing_prerequisite() {
        eprintln!("skipped: {why}");
        return;
    }
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/firmware.toml");
    let mut lab = Lab::create("bind").expect("a network namespace");
    lab.start_runner(&["--fabric", scenario])
        .expect("the runner, its fabric and its TAP");

    let target = FIRMWARE_IP.to_string();
    let ping = run("ip", &lab.exec(&["ping", "-c", "1", "-W", "5", &target]));
    ping.unwrap_or_else(|e| panic!("ping failed: {e}\nrunner log:\n{}", lab.log()));

    let bound = lab.inside(|| -> Result<u16, String> {
        let switch = SocketAddr::new(IpAddr::V4(FIRMWARE_IP), MANAGEMENT_UDP_PORT);
        let key = test_key();
        let mut client =
            Client::connect(ClientConfig::new(switch, key)).map_err(|e| e.to_string())?;
        let topology = read_topology(&mut client).map_err(|e| format!("topology: {e}"))?;
        let gpu = topology
            .endpoints
            .iter()
            .find(|e| e.class_code.0 >> 16 == 0x03)
            .ok_or("the firmware enumerated no GPU")?;
        let mut functions = BoundFunctions::new();
        functions.push(gpu.fabric_id).expect("room for one");
        let bind = Request::Bind {
            host: HostIndex(0),
            slot: SlotIndex(1),
            functions,
            if_generation: None,
        };
        match client.request(&bind).map_err(|e| format!("bind: {e}"))? {
            Response::Done => Ok(gpu.vendor_id),
            other => Err(format!("bind answered {other:?}")),
        }
    });
    let vendor = bound.unwrap_or_else(|e| panic!("{e}\nrunner log:\n{}", lab.log()));
    assert_eq!(vendor, 0x10de, "the scenario's GPUs");

    // The host's hot-plug driver scans slot 1 (02:01.0, secondary bus 4)
    // once the firmware's MSI reaches it, and loads the GPU's driver.
    let deadline = Instant::now() + Duration::from_secs(30);
    let wanted = "host1: hot-plug at 02:01.0: 04:00.0 added, driver bound";
    while !lab.log().contains(wanted) {
        assert!(
            Instant::now() < deadline,
            "the host did not report the GPU within 30 s; runner log:\n{}",
            lab.log()
        );
        thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn dnsmasq_leases_the_firmware_its_address_and_ping_and_weftctl_reach_it_there() {
    if let Some(why) =
        missing_prerequisite().or_else(|| missing_tool("dnsmasq", "--version", "dnsmasq-base"))
    {
        eprintln!("skipped: {why}");
        return;
    }
    let mut lab = Lab::create("dhcp").expect("a network namespace");
    lab.start_runner(&["--dhcp"])
        .expect("the runner and its TAP");
    lab.start_dhcp_server().expect("dnsmasq");

    let deadline = Instant::now() + LEASE_DEADLINE;
    let leased = loop {
        if let Some(address) = lab.leased_address() {
            break address;
        }
        assert!(
            Instant::now() < deadline,
            "dnsmasq leased the firmware no address within {LEASE_DEADLINE:?}\n{}",
            lab.logs()
        );
        thread::sleep(Duration::from_millis(100));
    };
    assert_ne!(leased, FIRMWARE_IP, "a leased address");
    // dnsmasq names its own address on the TAP as the router.
    let said = format!("ip: {leased}/24 leased from 192.168.70.1, router 192.168.70.1");
    while !lab.log().contains(&said) {
        assert!(
            Instant::now() < deadline,
            "the firmware did not say `{said}` within {LEASE_DEADLINE:?}\n{}",
            lab.logs()
        );
        thread::sleep(Duration::from_millis(100));
    }

    let target = leased.to_string();
    // The host learned the firmware's station address from the lease and
    // sends its first echo request without asking ARP; the firmware has
    // no entry for the host then, and smoltcp sends an ARP request instead
    // of the reply (it keeps no packets waiting for a neighbour). After
    // this first one, each request is answered.
    let _ = run("ip", &lab.exec(&["ping", "-c", "1", "-W", "1", &target]));
    let ping = run("ip", &lab.exec(&["ping", "-c", "3", "-W", "5", &target]));
    let ping = ping.unwrap_or_else(|e| panic!("ping {target} failed: {e}\n{}", lab.logs()));
    assert!(ping.contains("3 received"), "{ping}");
    // The default address went when DHCP was chosen.
    let default = FIRMWARE_IP.to_string();
    let stale = run("ip", &lab.exec(&["ping", "-c", "1", "-W", "1", &default]));
    assert!(
        stale.is_err(),
        "the default address still answers: {stale:?}"
    );

    let identity = lab.inside(move || {
        let switch = SocketAddr::new(IpAddr::V4(leased), MANAGEMENT_UDP_PORT);
        let key = test_key();
        let mut client = Client::connect(ClientConfig::new(switch, key)).expect("a UDP socket");
        client.identify()
    });
    let identity = identity.unwrap_or_else(|e| panic!("identify: {e}\n{}", lab.logs()));
    assert_eq!(identity.switch, SwitchId(FIRMWARE_SWITCH));
}
