//! Isolation on the reference fabric under any sequence of binds and
//! unbinds: four switches, hosts on one, endpoints on the others — two
//! of them below one ordinary PCIe switch, the NVMe drive's VFs sharing a
//! port.
//!
//! Which host reaches which function is checked by what crosses the
//! fabric of weft-model switches: each host's memory reads of the BARs it
//! assigned, and each function's DMA, never by reading back the tables
//! the manager wrote.

mod common;

use common::mesh::Mesh;
use common::reference::*;
use common::*;
use proptest::prelude::*;
use weft_fabric::binding::{UnbindMode, Unbinding};
use weft_fabric::inventory::{Binding, Function};
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::config::BarKind;
use weft_fabric::pcie::tlp::{Body, CompletionStatus, ConfigType, MemoryOp};
use weft_fabric::pcie::Bdf;
use weft_model::Packet;
use weft_regs::tables::HostIndex;

/// The hosts' ports: host 0 on S0.2, host 1 on S0.3.
const HOST_PORTS: [u8; 2] = [2, 3];
/// Slots used of each host's two.
const SLOTS: u8 = 2;

#[derive(Clone, Debug)]
enum Op {
    Bind {
        function: usize,
        host: u16,
        slot: u8,
    },
    Unbind {
        function: usize,
        surprise: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..10usize, 0..2u16, 0..SLOTS).prop_map(|(function, host, slot)| Op::Bind {
            function,
            host,
            slot
        }),
        (0..10usize, any::<bool>())
            .prop_map(|(function, surprise)| Op::Unbind { function, surprise }),
    ]
}

/// Applies `ops` through the manager; returns the bindings each accepted
/// call left, refusals changing nothing.
fn apply(mesh: &mut Mesh, manager: &mut FabricManager, ops: &[Op]) -> Vec<(Bdf, Binding)> {
    let ids: Vec<Bdf> = manager.inventory().functions.iter().map(|f| f.id).collect();
    assert_eq!(ids.len(), 10, "A, B, D, F, the NVMe PF and its 4 VFs, C");
    let mut host = FakeHost::default();
    let mut expected: Vec<(Bdf, Binding)> = Vec::new();
    for op in ops {
        match *op {
            Op::Bind {
                function,
                host: h,
                slot,
            } => {
                let binding = Binding {
                    host: HostIndex(h),
                    slot,
                };
                let bound = manager.bind(
                    ids[function],
                    binding.host,
                    slot,
                    &mut mesh.planes,
                    &mut host,
                );
                if bound.is_ok() {
                    expected.push((ids[function], binding));
                }
            }
            Op::Unbind { function, surprise } => {
                let mode = if surprise {
                    UnbindMode::Surprise
                } else {
                    UnbindMode::Graceful
                };
                // A graceful unbind waits for a host that never powers
                // the slot off: the function stays bound until a surprise
                // unbind overrides it.
                if let Ok(Unbinding::Unbound(_)) =
                    manager.unbind(ids[function], mode, &mut mesh.planes, &mut host)
                {
                    expected.retain(|(id, _)| *id != ids[function]);
                }
            }
        }
    }
    expected
}

/// The mesh's index of the switch a function is below.
fn place(manager: &FabricManager, function: &Function) -> (usize, u8) {
    let id = manager.inventory().switches[usize::from(function.switch.0)].id;
    let index = IDS.iter().position(|i| *i == id).expect("a mesh switch");
    (index, function.port.0)
}

/// A host's BAR: where it put it and where it is in the fabric.
struct HostBar {
    host_address: u64,
    fabric_address: u64,
    at: (usize, u8),
}

/// Each host numbers its virtual switch (upstream port bus 1, slots on
/// bus 2, slot `s` leading to bus 3 + s), assigns every BAR of what is
/// bound in its slots from its own bases and enables Memory Space and Bus
/// Master; returns, per host, what it put where.
fn hosts_assign(mesh: &mut Mesh, manager: &mut FabricManager) -> Vec<Vec<HostBar>> {
    let mut host = FakeHost::default();
    let (t0, t1) = (ConfigType::Type0, ConfigType::Type1);
    let mut assigned = Vec::new();
    for (index, port) in HOST_PORTS.iter().enumerate() {
        let at = (S0, *port);
        mesh.host_config(
            manager,
            &mut host,
            at,
            t0,
            Bdf::new(1, 0, 0),
            0x18,
            Some(0x0004_0201),
        );
        for slot in 0..SLOTS {
            let bus = 3 + u32::from(slot);
            let value = bus << 16 | bus << 8 | 2;
            mesh.host_config(
                manager,
                &mut host,
                at,
                t1,
                Bdf::new(2, slot, 0),
                0x18,
                Some(value),
            );
        }
        let (mut next32, mut next64) = (0xa000_0000u64, 0x10_0000_0000u64);
        let mut bars = Vec::new();
        for slot in 0..SLOTS {
            let Some(id) = manager.bound_at(HostIndex(index as u16), slot) else {
                continue;
            };
            let function = manager
                .inventory()
                .function(id)
                .expect("enumerated")
                .clone();
            let target = Bdf::new(3 + slot, 0, 0);
            for bar in &function.bars {
                let Some(fabric_address) = bar.fabric_address() else {
                    continue;
                };
                let size = bar.size();
                let wide = matches!(bar.bar().kind, BarKind::Memory64 { .. });
                let next = if wide { &mut next64 } else { &mut next32 };
                let base = next.div_ceil(size) * size;
                *next = base + size;
                let register = bar.register();
                let mut write = |offset, value| {
                    mesh.host_config(manager, &mut host, at, t1, target, offset, Some(value))
                };
                write(register, base as u32);
                if wide {
                    write(register + 4, (base >> 32) as u32);
                }
                bars.push(HostBar {
                    host_address: base,
                    fabric_address,
                    at: place(manager, &function),
                });
            }
            mesh.host_config(manager, &mut host, at, t1, target, 0x04, Some(0b110));
        }
        assigned.push(bars);
    }
    assigned
}

/// Where a one-DW memory read from host port `port` to `address` arrives,
/// and with which address; `None` when the host gets Unsupported Request.
fn host_reads(mesh: &mut Mesh, port: u8, address: u64) -> Option<((usize, u8), u64)> {
    mesh.net.arrivals.clear();
    let read = Packet::new(memory(MemoryOp::Read, ROOT_PORT, 1, address, 1), vec![]);
    mesh.net.send(S0, port, read);
    assert_eq!(mesh.net.arrivals.len(), 1, "{:#?}", mesh.net.arrivals);
    let (switch, at, packet) = mesh.net.arrivals.pop().expect("one");
    match packet.header.body {
        Body::Completion(c) => {
            assert_eq!(
                (switch, at),
                (S0, port),
                "a completion goes back to the host"
            );
            assert_eq!(c.status, CompletionStatus::UnsupportedRequest);
            None
        }
        _ => Some(((switch, at), as_memory(&packet).address)),
    }
}

/// Where a function's DMA write to 0x1000 arrives, and from which requester.
fn dma_from(mesh: &mut Mesh, at: (usize, u8), requester: Bdf) -> Option<((usize, u8), Bdf)> {
    mesh.net.arrivals.clear();
    let write = Packet::new(
        memory(MemoryOp::Write, requester, 0, 0x1000, 1),
        vec![1, 2, 3, 4],
    );
    mesh.net.send(at.0, at.1, write);
    assert!(mesh.net.arrivals.len() <= 1, "{:#?}", mesh.net.arrivals);
    let (switch, port, packet) = mesh.net.arrivals.pop()?;
    let m = as_memory(&packet);
    assert_eq!(m.address, 0x1000);
    Some(((switch, port), m.requester))
}

/// Each host reads exactly the BARs it assigned to its functions, at their
/// fabric addresses where they are, and nothing else; each bound
/// function's DMA reaches its own host only, as the function in its slot;
/// an unbound function's reaches nobody.
fn check_isolation(mesh: &mut Mesh, manager: &mut FabricManager, expected: &[(Bdf, Binding)]) {
    let assigned = hosts_assign(mesh, manager);
    let all = manager.inventory().functions.clone();
    for (host, port) in HOST_PORTS.iter().enumerate() {
        for function in &all {
            for fabric in function.bars.iter().filter_map(|b| b.fabric_address()) {
                // A fabric address is never a host address.
                assert_eq!(host_reads(mesh, *port, fabric + 8), None, "{fabric:#x}");
            }
        }
        for bar in &assigned[host] {
            assert_eq!(
                host_reads(mesh, *port, bar.host_address + 8),
                Some((bar.at, bar.fabric_address + 8))
            );
        }
        let mine: usize = expected
            .iter()
            .filter(|(_, b)| usize::from(b.host.0) == host)
            .map(|(id, _)| manager.inventory().function(*id).expect("found").bars.len())
            .sum();
        assert_eq!(
            assigned[host].len(),
            mine,
            "host {host} assigned its BARs only"
        );
    }
    for function in &all {
        let arrived = dma_from(mesh, place(manager, function), function.id);
        let want = expected
            .iter()
            .find(|(id, _)| *id == function.id)
            .map(|(_, b)| {
                (
                    (S0, HOST_PORTS[usize::from(b.host.0)]),
                    Bdf::new(3 + b.slot, 0, 0),
                )
            });
        assert_eq!(arrived, want, "DMA of {:?}", function.id);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any sequence of binds and unbinds on the reference fabric leaves
    /// each host reaching exactly its bound functions, wherever they are.
    #[test]
    fn each_host_reaches_exactly_its_bound_functions_across_the_fabric(
        ops in prop::collection::vec(op(), 0..14)
    ) {
        let (mut mesh, mut manager) = reference(pcie_switch(true));
        start(&mut mesh, &mut manager).expect("the fabric enumerates");
        let expected = apply(&mut mesh, &mut manager, &ops);
        check_isolation(&mut mesh, &mut manager, &expected);
    }
}
