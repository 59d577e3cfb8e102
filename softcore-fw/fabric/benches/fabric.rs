//! Figures of the fabric manager on the host: the time to discover and
//! enumerate the reference fabric, and the host configuration requests
//! the configuration virtualization path answers per second.
//!
//! Usage: `cargo bench -p weft-fabric --bench fabric [-- --json] [--seconds S]`
//!
//! The fabric is the tests' mock (`tests/common`): weft-model switches
//! carrying the manager's configuration TLPs, endpoints with weft-pcie
//! configuration spaces. Enumeration time is split into the manager's own
//! work and the time spent inside the mock answering its configuration
//! requests, which real hardware replaces with link round trips. The
//! configuration path is measured with every forwarded access answered at
//! once (no TLP) and every table write counted and dropped, so it is the
//! manager's own cost per request; the table entries a request writes are
//! counted, since on hardware each is a CSR write (in-band for another
//! switch). The library's code size and RAM on the soft core are
//! `cargo xtask fabric-size`'s.
#![forbid(unsafe_code)]
#![allow(missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use common::reference::{pcie_switch, reference, start, GPU_VENDOR, IDS, PORTS, S0};
use common::FakeHost;
use weft_fabric::hw::{
    config_read, config_write, ConfigFault, ConfigPath, ConfigRequests, DataPlane, Fabric,
    FabricConfig, HostConfigRequest, RemoteSwitch, TableWriteError,
};
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::tlp::{ConfigRequest, ConfigType, Tag};
use weft_fabric::pcie::Bdf;
use weft_regs::tables::{
    AddressRoute, Destination, FunctionOwner, HostIndex, IdMapping, LinkRequest, PortIndex,
    PortRole, Window,
};

/// Configuration access that counts requests and the time spent answering them.
struct Counting<'a, C: FabricConfig> {
    inner: &'a mut C,
    requests: u64,
    inside: Duration,
}

impl<C: FabricConfig> Counting<'_, C> {
    fn timed<R>(&mut self, access: impl FnOnce(&mut C) -> R) -> R {
        let start = Instant::now();
        let result = access(self.inner);
        self.inside += start.elapsed();
        self.requests += 1;
        result
    }
}

impl<C: FabricConfig> ConfigRequests for Counting<'_, C> {
    fn config_request(
        &mut self,
        path: ConfigPath,
        target: Bdf,
        offset: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        self.timed(|c| match write {
            None => config_read(c, path, target, offset),
            Some((value, byte_enables)) => {
                config_write(c, path, target, offset, value, byte_enables).map(|()| 0)
            }
        })
    }

    fn limit_completion_wait(&mut self, timeout_ns: Option<u64>) {
        self.inner.limit_completion_wait(timeout_ns);
    }
}

/// Every forwarded access answered at once: reads return the GPU's IDs.
struct Immediate;

impl ConfigRequests for Immediate {
    fn config_request(
        &mut self,
        _: ConfigPath,
        _: Bdf,
        _: u16,
        write: Option<(u32, u8)>,
    ) -> Result<u32, ConfigFault> {
        Ok(match write {
            None => 0x1db4_0000 | u32::from(GPU_VENDOR),
            Some(_) => 0,
        })
    }

    /// Nothing waits: every access is answered at once.
    fn limit_completion_wait(&mut self, _timeout_ns: Option<u64>) {}
}

struct Enumeration {
    runs: u32,
    total: Duration,
    inside: Duration,
    requests: u64,
    functions: usize,
    bridges: usize,
    switches: usize,
    waited_ns: u64,
}

/// Starts fresh copies of the reference fabric until `budget` is spent.
fn enumerate(budget: Duration) -> Result<Enumeration, String> {
    let mut m = Enumeration {
        runs: 0,
        total: Duration::ZERO,
        inside: Duration::ZERO,
        requests: 0,
        functions: 0,
        bridges: 0,
        switches: 0,
        waited_ns: 0,
    };
    while m.total < budget || m.runs < 3 {
        let (mut mesh, mut manager) = reference(pcie_switch(true));
        let mut clock = mesh.net.clock.clone();
        let mut config = Counting {
            inner: &mut mesh.net,
            requests: 0,
            inside: Duration::ZERO,
        };
        let start = Instant::now();
        manager
            .start(&mut config, &mut clock, &mut mesh.planes, 0)
            .map_err(|e| format!("the reference fabric did not enumerate: {e:?}"))?;
        m.total += start.elapsed();
        m.inside += config.inside;
        m.requests = config.requests;
        m.runs += 1;
        let inventory = manager.inventory();
        m.functions = inventory.functions.len();
        m.bridges = inventory.bridges.len();
        m.switches = inventory.switches.len();
        m.waited_ns = mesh.net.clock.0.get();
    }
    Ok(m)
}

/// Every switch's tables, counting the entries written and keeping none,
/// so the configuration path is timed without a switch model behind it.
struct Discard {
    ports: usize,
    writes: u64,
}

impl Discard {
    fn write(&mut self) -> Result<(), TableWriteError> {
        self.writes += 1;
        Ok(())
    }
}

impl DataPlane for Discard {
    fn ports(&self) -> usize {
        self.ports
    }

    fn set_port_role(&mut self, _: PortIndex, _: PortRole) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_window(&mut self, _: PortIndex, _: usize, _: Window) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_port_settled(&mut self, _: PortIndex, _: bool) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_peer_window(
        &mut self,
        _: PortIndex,
        _: usize,
        _: Window,
        _: Option<HostIndex>,
    ) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_function_owner(
        &mut self,
        _: PortIndex,
        _: usize,
        _: Option<FunctionOwner>,
    ) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_id_mapping(
        &mut self,
        _: PortIndex,
        _: usize,
        _: Option<IdMapping>,
    ) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_completer_id(&mut self, _: PortIndex, _: Bdf) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_p2p_request_redirect(&mut self, _: PortIndex, _: bool) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_return_to_ingress(&mut self, _: PortIndex, _: bool) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_intx_swizzle(&mut self, _: PortIndex, _: u8) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_address_route(
        &mut self,
        _: usize,
        _: Option<AddressRoute>,
    ) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_bus_route(&mut self, _: u8, _: Option<Destination>) -> Result<(), TableWriteError> {
        self.write()
    }

    fn abandon_requests_to(&mut self, _: PortIndex) -> Result<(), TableWriteError> {
        self.write()
    }

    fn abandon_host_requests_to(
        &mut self,
        _: PortIndex,
        _: PortIndex,
    ) -> Result<(), TableWriteError> {
        self.write()
    }

    fn request_link(&mut self, _: PortIndex, _: LinkRequest) -> Result<(), TableWriteError> {
        self.write()
    }

    /// Nothing is counted: no TLP passes a table that keeps no entries.
    fn read_counter(&mut self, _: PortIndex, _: u32) -> Result<u64, TableWriteError> {
        Ok(0)
    }

    fn clear_counters(&mut self, _: PortIndex) -> Result<(), TableWriteError> {
        self.write()
    }

    fn set_completion_timeout_us(&mut self, _: u32) -> Result<(), TableWriteError> {
        self.write()
    }
}

/// One [`Discard`] standing for every switch of the fabric.
struct Everywhere(Discard);

impl Fabric for Everywhere {
    fn local(&mut self) -> &mut dyn DataPlane {
        &mut self.0
    }

    fn remote(&mut self, _: RemoteSwitch) -> Option<&mut dyn DataPlane> {
        Some(&mut self.0)
    }
}

struct Path {
    name: &'static str,
    requests: u64,
    elapsed: Duration,
    table_writes: u64,
}

fn request(
    config_type: ConfigType,
    target: Bdf,
    offset: u16,
    write: Option<u32>,
) -> HostConfigRequest {
    HostConfigRequest {
        switch: IDS[S0],
        port: PortIndex(2),
        request: ConfigRequest::new(
            config_type,
            common::ROOT_PORT,
            Tag::new(1).expect("fits"),
            target,
            offset,
            write.map(|_| 0xf),
        ),
        data: write.unwrap_or(0),
    }
}

/// Host 0 with GPU D bound in slot 0, its virtual switch enumerated
/// (upstream port bus 1, slots on bus 2, slot 0's secondary bus 3) and
/// D's BAR0 assigned; then each kind of request is answered until `budget`
/// is spent.
fn config_paths(budget: Duration) -> Result<Vec<Path>, String> {
    let (mut mesh, mut manager) = reference(pcie_switch(true));
    start(&mut mesh, &mut manager).map_err(|e| format!("{e:?}"))?;
    let mut host = FakeHost::default();
    let gpu_d = Bdf::new(7, 0, 0);
    manager
        .bind(gpu_d, HostIndex(0), 0, &mut mesh.planes, &mut host)
        .map_err(|e| format!("binding GPU D: {e:?}"))?;
    let (t0, t1) = (ConfigType::Type0, ConfigType::Type1);
    let at = (S0, 2);
    for (t, target, offset, value) in [
        (t0, Bdf::new(1, 0, 0), 0x18, 0x0004_0201),
        (t1, Bdf::new(2, 0, 0), 0x18, 0x0003_0302),
        (t1, Bdf::new(3, 0, 0), 0x10, 0x9000_0000),
        (t1, Bdf::new(3, 0, 0), 0x04, 0b110),
    ] {
        mesh.host_config(&mut manager, &mut host, at, t, target, offset, Some(value));
    }
    // Each case's request is answered over and over; the cases run in
    // order, so the last one finds Memory Space turned off by its setup.
    let cases = [
        (
            "virtual upstream port read",
            request(t0, Bdf::new(1, 0, 0), 0x00, None),
        ),
        (
            "virtual downstream port read",
            request(t1, Bdf::new(2, 0, 0), 0x18, None),
        ),
        (
            "bound function read, forwarded",
            request(t1, Bdf::new(3, 0, 0), 0x00, None),
        ),
        (
            "unclaimed function (UR)",
            request(t1, Bdf::new(9, 0, 0), 0x00, None),
        ),
        (
            "bound function Command write, windows rewritten",
            request(t1, Bdf::new(3, 0, 0), 0x04, Some(0b110)),
        ),
        (
            "bound function BAR write, windows rewritten",
            request(t1, Bdf::new(3, 0, 0), 0x10, Some(0x9000_0000)),
        ),
        (
            "bound function BAR write, decoding off (sizing)",
            request(t1, Bdf::new(3, 0, 0), 0x10, Some(0xffff_ffff)),
        ),
    ];
    let decoding_off = request(t1, Bdf::new(3, 0, 0), 0x04, Some(0));
    let mut tables = Everywhere(Discard {
        ports: PORTS,
        writes: 0,
    });
    let mut results = Vec::new();
    for (name, req) in cases {
        if name.contains("decoding off") {
            manager
                .handle_config(&decoding_off, &mut Immediate, &mut tables, &mut host)
                .map_err(|e| format!("{name}: {e:?}"))?;
        }
        let mut path = Path {
            name,
            requests: 0,
            elapsed: Duration::ZERO,
            table_writes: 0,
        };
        tables.0.writes = 0;
        while path.elapsed < budget {
            let start = Instant::now();
            for _ in 0..1000 {
                let reply = manager
                    .handle_config(black_box(&req), &mut Immediate, &mut tables, &mut host)
                    .map_err(|e| format!("{name}: {e:?}"))?;
                black_box(reply);
            }
            path.elapsed += start.elapsed();
            path.requests += 1000;
        }
        path.table_writes = tables.0.writes;
        results.push(path);
    }
    Ok(results)
}

struct Options {
    json: bool,
    budget: Duration,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        json: false,
        budget: Duration::from_millis(500),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => opts.json = true,
            // `cargo bench` passes it to every bench binary.
            "--bench" => {}
            "--seconds" => {
                let v = args
                    .next()
                    .ok_or("--seconds needs a value, e.g. --seconds 0.5")?;
                let secs: f64 = v
                    .parse()
                    .map_err(|_| format!("--seconds {v}: not a number of seconds"))?;
                if !(secs.is_finite() && secs > 0.0) {
                    return Err(format!("--seconds {v}: must be positive"));
                }
                opts.budget = Duration::from_secs_f64(secs);
            }
            "-h" | "--help" => {
                return Err(
                    "usage: fabric [--json] [--seconds S]  (S: time per measurement, default 0.5)"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument {other}; try --help")),
        }
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::FAILURE;
        }
    };
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let enumeration = match enumerate(opts.budget) {
        Ok(e) => e,
        Err(msg) => {
            eprintln!("fabric bench: {msg}");
            return ExitCode::FAILURE;
        }
    };
    let paths = match config_paths(opts.budget) {
        Ok(p) => p,
        Err(msg) => {
            eprintln!("fabric bench: {msg}");
            return ExitCode::FAILURE;
        }
    };
    let runs = f64::from(enumeration.runs);
    let total_us = enumeration.total.as_secs_f64() * 1e6 / runs;
    let inside_us = enumeration.inside.as_secs_f64() * 1e6 / runs;
    let manager_bytes = std::mem::size_of::<FabricManager>();
    let fabric = "the reference fabric (tests/common/reference.rs): 4 weft switches in a ring, \
                  2 hosts, 4 GPUs (one below a PCIe switch), NVMe PF with 4 VFs, a NIC";
    if opts.json {
        let value = serde_json::json!({
            "profile": profile,
            "fabric": fabric,
            "enumeration": {
                "runs": enumeration.runs,
                "microseconds": total_us,
                "manager_microseconds": total_us - inside_us,
                "mock_fabric_microseconds": inside_us,
                "config_requests": enumeration.requests,
                "switches": enumeration.switches,
                "functions": enumeration.functions,
                "bridges": enumeration.bridges,
                "simulated_wait_ns": enumeration.waited_ns,
            },
            "config_requests_per_second": paths.iter().map(|p| serde_json::json!({
                "request": p.name,
                "requests": p.requests,
                "seconds": p.elapsed.as_secs_f64(),
                "per_second": p.requests as f64 / p.elapsed.as_secs_f64(),
                "table_writes_per_request": p.table_writes as f64 / p.requests as f64,
            })).collect::<Vec<_>>(),
            "fabric_manager_bytes_host": manager_bytes,
        });
        println!("{value}");
        return ExitCode::SUCCESS;
    }
    println!("weft-fabric on the host ({profile} build)");
    println!("fabric: {fabric}");
    println!();
    println!(
        "enumeration: {} switches, {} functions, {} PCIe switch ports, {} configuration requests",
        enumeration.switches, enumeration.functions, enumeration.bridges, enumeration.requests
    );
    println!("{:<46} {:>12}", "", "µs per run");
    println!(
        "{:<46} {:>12.1}",
        "discovery + enumeration + routes", total_us
    );
    println!(
        "{:<46} {:>12.1}",
        "  of it the manager's own work",
        total_us - inside_us
    );
    println!(
        "{:<46} {:>12.1}",
        "  of it the mock fabric answering", inside_us
    );
    println!(
        "(readiness waits are simulated: {} ms of bus time, not spent; {} runs)",
        enumeration.waited_ns / 1_000_000,
        enumeration.runs
    );
    println!();
    println!(
        "{:<48} {:>12} {:>14}",
        "host configuration request", "requests/s", "table writes"
    );
    for p in &paths {
        println!(
            "{:<48} {:>12.0} {:>14.0}",
            p.name,
            p.requests as f64 / p.elapsed.as_secs_f64(),
            p.table_writes as f64 / p.requests as f64
        );
    }
    println!();
    println!("FabricManager state: {manager_bytes} bytes on this host (soft core: cargo xtask fabric-size)");
    ExitCode::SUCCESS
}
