//! The binding state as the hosts see it through the switch, its
//! generation, its event log, and its survival of reboots and torn flash
//! writes.
//!
//! Which host reaches which function is checked by sending memory reads
//! through weft-model's switch from each host port, never by reading back
//! the tables the manager wrote.

mod common;

use common::*;
use proptest::prelude::*;
use weft_fabric::binding::{BindError, UnbindMode, Unbinding};
use weft_fabric::events::{ErrorSeverity, Event, NotRestored};
use weft_fabric::generation::Generation;
use weft_fabric::inventory::Binding;
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::config::{Bar, BarKind};
use weft_fabric::pcie::tlp::{Body, CompletionStatus, ConfigType, MemoryOp};
use weft_fabric::pcie::Bdf;
use weft_fabric::persist::{self, Flash, FlashError, StoredConfig, MAX_RECORD_LEN};
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_model::{Destination, PortIndex as ModelPort};
use weft_regs::tables::{HostIndex, PortIndex};

const PORTS: usize = 8;
const HOST_PORTS: [u8; 2] = [0, 1];
const SLOTS: u8 = 2;
const GPU: u8 = 2;
const NVME: u8 = 3;
const MULTI: u8 = 4;

fn settings() -> FabricSettings {
    let mut s = FabricSettings {
        num_vfs: 2,
        ..FabricSettings::default()
    };
    s.upstream_identity = identity(0x1d1d, 0x0001, 0x06_04_00);
    s.downstream_identity = identity(0x1d1d, 0x0002, 0x06_04_00);
    for (host, port) in HOST_PORTS.iter().enumerate() {
        s.hosts
            .push(HostPort {
                switch: s.switch_id,
                port: PortIndex(*port),
                host: HostIndex(host as u16),
                slots: SLOTS,
            })
            .expect("room for two hosts");
    }
    s
}

fn devices(fabric: &mut FakeFabric, with_gpu: bool) {
    if with_gpu {
        fabric.devices[usize::from(GPU)] = Some(FakeDevice::new(vec![plain_function(
            0,
            identity(0x10de, 0x2330, 0x03_02_00),
            [
                Some(Bar::memory32(16 << 20)),
                Some(Bar::memory64(256 << 20, true)),
                None,
                None,
                None,
                None,
            ],
            false,
        )]));
    }
    let sriov = nvme_sriov(2);
    fabric.devices[usize::from(NVME)] = Some(FakeDevice::new(vec![sriov_pf(
        identity(0x144d, 0xa824, 0x01_08_02),
        [
            Some(Bar::memory64(16 << 10, false)),
            None,
            None,
            None,
            None,
            None,
        ],
        sriov,
    )]));
    let nic = identity(0x8086, 0x1521, 0x02_00_00);
    let bar = [Some(Bar::memory32(4 << 10)), None, None, None, None, None];
    fabric.devices[usize::from(MULTI)] = Some(FakeDevice::new(vec![
        plain_function(0, nic, bar, true),
        plain_function(1, nic, bar, true),
    ]));
}

fn booted(with_gpu: bool) -> Rig {
    let clock = Clock::default();
    let mut fabric = FakeFabric::new(PORTS, clock.clone());
    devices(&mut fabric, with_gpu);
    let mut rig = Rig {
        plane: ModelPlane::new(PORTS),
        fabric,
        clock: clock.clone(),
        host: FakeHost::default(),
        manager: FabricManager::new(settings()).expect("valid settings"),
    };
    let mut clock = clock;
    rig.manager
        .start(&mut rig.fabric, &mut clock, &mut rig.plane.switch, 0)
        .expect("the fabric enumerates");
    rig
}

/// Every function enumeration found: the GPU, the NVMe PF, its two VFs, the two NIC functions.
fn functions(rig: &Rig) -> Vec<Bdf> {
    rig.manager
        .inventory()
        .functions
        .iter()
        .map(|f| f.id)
        .collect()
}

/// Each host numbers its virtual switch: upstream bus 1, slots on bus 2,
/// slot `s` leading to bus 3 + s.
fn hosts_enumerate(rig: &mut Rig) {
    for port in HOST_PORTS {
        rig.write(
            port,
            ConfigType::Type0,
            Bdf::new(1, 0, 0),
            0x18,
            0x0004_0201,
        );
        for slot in 0..SLOTS {
            let bus = 3 + u32::from(slot);
            rig.write(
                port,
                ConfigType::Type1,
                Bdf::new(2, slot, 0),
                0x18,
                bus << 16 | bus << 8 | 2,
            );
        }
    }
}

/// Where a host put one BAR of one of its functions.
struct HostBar {
    host_address: u64,
    fabric_address: u64,
    port: u8,
}

/// Each host assigns every BAR of the functions in its slots, naturally
/// aligned from its own bases (which are not fabric addresses), and
/// enables Memory Space; returns, per host, what it put where.
fn hosts_assign_bars(rig: &mut Rig) -> Vec<Vec<HostBar>> {
    let mut assigned = Vec::new();
    for (host, port) in HOST_PORTS.iter().enumerate() {
        let mut next32 = 0xa000_0000u64;
        let mut next64 = 0x10_0000_0000u64;
        let mut bars = Vec::new();
        for slot in 0..SLOTS {
            let Some(id) = rig.manager.bound_at(HostIndex(host as u16), slot) else {
                continue;
            };
            let function = rig
                .manager
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
                rig.write(*port, ConfigType::Type1, target, register, base as u32);
                if wide {
                    rig.write(
                        *port,
                        ConfigType::Type1,
                        target,
                        register + 4,
                        (base >> 32) as u32,
                    );
                }
                bars.push(HostBar {
                    host_address: base,
                    fabric_address,
                    port: function.port.0,
                });
            }
            rig.write16(*port, ConfigType::Type1, target, 0x04, 0b110);
        }
        assigned.push(bars);
    }
    assigned
}

/// A one-DW memory read from host port `port` to `address`: the port it
/// reaches and the address it arrives with, or `None` if the host gets an
/// Unsupported Request completion instead.
fn host_reads(rig: &mut Rig, port: u8, address: u64) -> Option<(u8, u64)> {
    let out = rig
        .plane
        .send(port, memory(MemoryOp::Read, ROOT_PORT, 1, address, 1), &[]);
    assert_eq!(out.deliveries.len(), 1, "{out:#?}");
    let delivery = &out.deliveries[0];
    match delivery.to {
        Destination::Port(ModelPort(to)) if to != port => {
            Some((to, as_memory(&delivery.packet).address))
        }
        Destination::Port(ModelPort(to)) => {
            assert_eq!(to, port);
            let Body::Completion(c) = delivery.packet.header.body else {
                panic!("a completion back to the host: {delivery:#?}");
            };
            assert_eq!(c.status, CompletionStatus::UnsupportedRequest);
            None
        }
        other => panic!("a host read went to {other:?}"),
    }
}

/// For every host and every function: a read of the function's BAR
/// arrives there iff the function is bound to that host, at the address
/// the host assigned it; a read of the fabric address itself, or of
/// anything the host did not assign, completes with UR.
fn check_isolation(rig: &mut Rig, expected: &[(Bdf, Binding)]) {
    hosts_enumerate(rig);
    let assigned = hosts_assign_bars(rig);
    let all = rig.manager.inventory().functions.clone();
    for (host, port) in HOST_PORTS.iter().enumerate() {
        let host = HostIndex(host as u16);
        for function in &all {
            let bound_here = expected
                .iter()
                .any(|(id, b)| *id == function.id && b.host == host);
            for bar in function.bars.iter().filter_map(|b| b.fabric_address()) {
                // The fabric address is never a host address.
                assert_eq!(host_reads(rig, *port, bar + 8), None, "{host:?} {bar:#x}");
                let mine = assigned[usize::from(host.0)]
                    .iter()
                    .find(|b| b.fabric_address == bar);
                assert_eq!(mine.is_some(), bound_here, "{host:?} {:?}", function.id);
                if let Some(b) = mine {
                    assert_eq!(
                        host_reads(rig, *port, b.host_address + 8),
                        Some((b.port, b.fabric_address + 8)),
                        "{host:?} {:?}",
                        function.id
                    );
                }
            }
        }
        // Beyond everything it assigned: nothing.
        assert_eq!(host_reads(rig, *port, 0xa000_0000 + (1 << 28) + 8), None);
    }
}

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
    /// The host's hot-plug driver powers a slot off (Power Controller
    /// Control, PCIe Base 6.0 §7.5.3.10).
    PowerOff {
        host: u16,
        slot: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..6usize, 0..2u16, 0..3u8).prop_map(|(function, host, slot)| Op::Bind {
            function,
            host,
            slot
        }),
        (0..6usize, any::<bool>())
            .prop_map(|(function, surprise)| Op::Unbind { function, surprise }),
        (0..2u16, 0..SLOTS).prop_map(|(host, slot)| Op::PowerOff { host, slot }),
    ]
}

/// Applies `ops`, keeping the expected bindings from what each call
/// returned, and checks the generation moves exactly with the changes.
///
/// A graceful unbind of a powered slot waits: the function stays bound,
/// the slot shows the unbind (a new generation), and the unbind takes
/// effect when the host powers the slot off (another), or when a surprise
/// unbind overrides it; one of a slot already powered off is at once.
fn apply(rig: &mut Rig, ops: &[Op]) -> Vec<(Bdf, Binding)> {
    let ids = functions(rig);
    assert_eq!(ids.len(), 6, "GPU, NVMe PF and two VFs, two NIC functions");
    hosts_enumerate(rig);
    let mut expected: Vec<(Bdf, Binding)> = Vec::new();
    // Unbinds waiting for their host, and the slots powered off.
    let mut waiting: Vec<Bdf> = Vec::new();
    let mut powered_off: Vec<(u16, u8)> = Vec::new();
    for op in ops {
        let before = rig.manager.generation();
        let result = match *op {
            Op::PowerOff { host, slot } => {
                let port = HOST_PORTS[usize::from(host)];
                rig.power_off_slot(port, Bdf::new(2, slot, 0));
                if !powered_off.contains(&(host, slot)) {
                    powered_off.push((host, slot));
                }
                let released = expected.iter().position(|(f, b)| {
                    (b.host, b.slot) == (HostIndex(host), slot) && waiting.contains(f)
                });
                match released {
                    Some(index) => {
                        let (function, _) = expected.remove(index);
                        waiting.retain(|f| *f != function);
                        Ok(before.next())
                    }
                    None => {
                        assert_eq!(rig.manager.generation(), before, "nothing to unbind");
                        continue;
                    }
                }
            }
            Op::Bind {
                function,
                host,
                slot,
            } => {
                let id = ids[function];
                let binding = Binding {
                    host: HostIndex(host),
                    slot,
                };
                let result = rig.manager.bind_if(
                    id,
                    binding.host,
                    slot,
                    Some(before),
                    &mut rig.plane.switch,
                    &mut rig.host,
                );
                if result.is_ok() {
                    expected.push((id, binding));
                }
                result
            }
            Op::Unbind { function, surprise } => {
                let id = ids[function];
                let mode = if surprise {
                    UnbindMode::Surprise
                } else {
                    UnbindMode::Graceful
                };
                let slot_off = expected
                    .iter()
                    .find(|(f, _)| *f == id)
                    .is_some_and(|(_, b)| powered_off.contains(&(b.host.0, b.slot)));
                let result = rig.manager.unbind_if(
                    id,
                    mode,
                    Some(before),
                    &mut rig.plane.switch,
                    &mut rig.host,
                );
                match result {
                    Ok(Unbinding::Unbound(generation)) => {
                        assert!(surprise || slot_off, "a powered slot's unbind waits");
                        expected.retain(|(f, _)| *f != id);
                        waiting.retain(|f| *f != id);
                        Ok(generation)
                    }
                    Ok(Unbinding::Waiting(_)) => {
                        assert!(
                            !surprise && !slot_off,
                            "only a powered slot's graceful unbind waits"
                        );
                        waiting.push(id);
                        Ok(rig.manager.generation())
                    }
                    Err(error) => {
                        if waiting.contains(&id) {
                            assert!(
                                matches!(error, BindError::UnbindInProgress { .. }),
                                "{error:?}"
                            );
                        }
                        Err(error)
                    }
                }
            }
        };
        match result {
            Ok(generation) => {
                assert_eq!(generation, before.next());
                assert_eq!(rig.manager.generation(), generation);
            }
            Err(error) => {
                assert!(!matches!(error, BindError::StaleGeneration { .. }));
                assert_eq!(
                    rig.manager.generation(),
                    before,
                    "{error:?} changed nothing"
                );
            }
        }
    }
    expected
}

fn bindings_of(rig: &Rig) -> Vec<(Bdf, Binding)> {
    let mut found = Vec::new();
    for host in 0..2u16 {
        for slot in 0..SLOTS {
            if let Some(id) = rig.manager.bound_at(HostIndex(host), slot) {
                found.push((
                    id,
                    Binding {
                        host: HostIndex(host),
                        slot,
                    },
                ));
            }
        }
    }
    found.sort_by_key(|(id, _)| id.0);
    found
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any sequence of binds and unbinds leaves each host reaching exactly
    /// its bound functions through the switch.
    #[test]
    fn each_host_reaches_exactly_its_bound_functions(ops in prop::collection::vec(op(), 0..12)) {
        let mut rig = booted(true);
        let mut expected = apply(&mut rig, &ops);
        expected.sort_by_key(|(id, _)| id.0);
        prop_assert_eq!(&bindings_of(&rig), &expected);
        check_isolation(&mut rig, &expected);
    }

    /// After a reboot, the stored bindings come back, and with them the same isolation.
    #[test]
    fn a_reboot_restores_the_same_bindings(ops in prop::collection::vec(op(), 0..12)) {
        let mut rig = booted(true);
        let mut expected = apply(&mut rig, &ops);
        expected.sort_by_key(|(id, _)| id.0);
        let mut flash = RamFlash::new(1024);
        rig.manager.save_config(&mut flash).expect("saved");
        let generation = rig.manager.generation();

        let stored = persist::load(&mut flash).expect("readable").expect("a record");
        let mut settings = settings();
        settings.num_vfs = 0;
        stored.apply_to(&mut settings);
        prop_assert_eq!(settings.num_vfs, 2);
        let mut rig = booted(true);
        let restored = rig
            .manager
            .restore(&stored, &mut rig.plane.switch, &mut rig.host)
            .expect("restored");
        prop_assert_eq!(usize::from(restored.bound), expected.len());
        prop_assert_eq!(restored.not_restored, 0);
        prop_assert_eq!(rig.manager.generation(), generation);
        prop_assert_eq!(&bindings_of(&rig), &expected);
        check_isolation(&mut rig, &expected);
    }
}

// ---------------------------------------------------------------- flash

/// Flash in RAM that can be made to stop after a number of bytes erased
/// or programmed, as a power loss would, leaving a torn slot.
struct RamFlash {
    bytes: Vec<u8>,
    /// Bytes still erased or programmed before the power goes.
    budget: Option<usize>,
}

impl RamFlash {
    fn new(size: usize) -> Self {
        RamFlash {
            bytes: vec![0xff; size],
            budget: None,
        }
    }

    /// Spends one byte of the budget; `false` once the power is gone.
    fn spend(&mut self) -> bool {
        match &mut self.budget {
            Some(0) => false,
            Some(n) => {
                *n -= 1;
                true
            }
            None => true,
        }
    }

    fn range(&self, offset: u32, len: usize) -> Result<std::ops::Range<usize>, FlashError> {
        let start = offset as usize;
        if start + len > self.bytes.len() {
            return Err(FlashError::OutOfRange {
                offset,
                len: len as u32,
            });
        }
        Ok(start..start + len)
    }
}

impl Flash for RamFlash {
    fn size(&self) -> u32 {
        self.bytes.len() as u32
    }

    fn read(&mut self, offset: u32, buf: &mut [u8]) -> Result<(), FlashError> {
        let range = self.range(offset, buf.len())?;
        buf.copy_from_slice(&self.bytes[range]);
        Ok(())
    }

    fn erase(&mut self, offset: u32, len: u32) -> Result<(), FlashError> {
        for i in self.range(offset, len as usize)? {
            if !self.spend() {
                return Err(FlashError::Failed { offset: i as u32 });
            }
            self.bytes[i] = 0xff;
        }
        Ok(())
    }

    fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), FlashError> {
        for (i, byte) in self.range(offset, data.len())?.zip(data) {
            if !self.spend() {
                // A torn byte: its upper bits programmed, unless that
                // would be the whole byte (then the power went before it).
                if byte | 0x0f != *byte {
                    self.bytes[i] &= byte | 0x0f;
                }
                return Err(FlashError::Failed { offset: i as u32 });
            }
            self.bytes[i] &= byte;
        }
        Ok(())
    }
}

fn config(generation: u32, bound: usize) -> StoredConfig {
    let mut config = StoredConfig {
        generation: Generation(generation),
        num_vfs: 2,
        ..StoredConfig::default()
    };
    for slot in 0..bound {
        config
            .bindings
            .push(persist::StoredBinding {
                function: Bdf::new(3 + slot as u8, 0, 0),
                vendor_id: 0x10de,
                device_id: 0x2330,
                binding: Binding {
                    host: HostIndex(slot as u16 % 2),
                    slot: slot as u8 / 2,
                },
            })
            .expect("room");
    }
    config
}

#[test]
fn a_save_interrupted_at_any_byte_leaves_the_last_good_record() {
    let size = 2 * MAX_RECORD_LEN;
    let first = config(1, 3);
    let second = config(2, 5);
    // Erasing a slot and writing the second record, byte by byte.
    let mut clean = RamFlash::new(size);
    persist::save(&mut clean, &first).expect("first");
    let total = size / 2 + 12 + 8 + 5 * 10 + 4;
    for budget in 0..total {
        let mut flash = RamFlash::new(size);
        persist::save(&mut flash, &first).expect("first");
        flash.budget = Some(budget);
        assert!(persist::save(&mut flash, &second).is_err(), "{budget}");
        flash.budget = None;
        assert_eq!(
            persist::load(&mut flash).expect("readable"),
            Some(first.clone()),
            "interrupted after {budget} bytes"
        );
        // The next save goes to the torn slot again and then wins.
        persist::save(&mut flash, &second).expect("second");
        assert_eq!(
            persist::load(&mut flash).expect("readable"),
            Some(second.clone())
        );
    }
    // Saves alternate: a third interrupted one leaves the second.
    let mut flash = RamFlash::new(size);
    persist::save(&mut flash, &first).expect("first");
    persist::save(&mut flash, &second).expect("second");
    for budget in 0..total {
        let mut torn = RamFlash {
            bytes: flash.bytes.clone(),
            budget: Some(budget),
        };
        assert!(persist::save(&mut torn, &config(3, 5)).is_err());
        torn.budget = None;
        assert_eq!(
            persist::load(&mut torn).expect("readable"),
            Some(second.clone())
        );
    }
}

#[test]
fn blank_flash_holds_no_configuration_and_a_small_one_is_refused() {
    assert_eq!(persist::load(&mut RamFlash::new(1024)), Ok(None));
    assert_eq!(
        persist::save(&mut RamFlash::new(64), &config(0, 0)),
        Err(persist::PersistError::RegionTooSmall {
            needed: MAX_RECORD_LEN as u32,
            available: 32
        })
    );
}

// ---------------------------------------------------------------- generation and events

#[test]
fn a_change_on_a_stale_generation_is_refused_with_nothing_changed() {
    let mut rig = booted(true);
    let ids = functions(&rig);
    let g0 = rig.manager.generation();
    let g1 = rig
        .manager
        .bind_if(
            ids[0],
            HostIndex(0),
            0,
            Some(g0),
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("current generation");
    assert_eq!(g1, Generation(g0.0 + 1));
    // A second manager that read g0 tries to take the same slot.
    assert_eq!(
        rig.manager.bind_if(
            ids[4],
            HostIndex(0),
            1,
            Some(g0),
            &mut rig.plane.switch,
            &mut rig.host
        ),
        Err(BindError::StaleGeneration {
            expected: g0,
            current: g1
        })
    );
    assert_eq!(rig.manager.bound_at(HostIndex(0), 1), None);
    assert_eq!(
        rig.manager.unbind_if(
            ids[0],
            UnbindMode::Graceful,
            Some(g0),
            &mut rig.plane.switch,
            &mut rig.host
        ),
        Err(BindError::StaleGeneration {
            expected: g0,
            current: g1
        })
    );
    assert_eq!(rig.manager.bound_at(HostIndex(0), 0), Some(ids[0]));
    let g2 = rig
        .manager
        .unbind(
            ids[0],
            UnbindMode::Surprise,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("no precondition");
    assert_eq!(g2, Unbinding::Unbound(g1.next()));
}

#[test]
fn the_log_holds_enumeration_bindings_hot_plug_and_errors_in_order() {
    let mut rig = booted(true);
    let ids = functions(&rig);
    let added = rig
        .manager
        .events()
        .since(0)
        .filter(|e| matches!(e.event, Event::DeviceAdded { .. }))
        .count();
    assert_eq!(added, 6);
    let from = rig.manager.events().next_sequence();
    rig.manager
        .bind(
            ids[0],
            HostIndex(1),
            1,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind");
    rig.manager
        .record_error_message(ids[0], ErrorSeverity::NonFatal);
    rig.manager
        .unbind(
            ids[0],
            UnbindMode::Surprise,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("unbind");
    let since = rig.manager.events().since(from);
    assert_eq!(since.overwritten, 0);
    let events: Vec<Event> = since.map(|e| e.event).collect();
    let binding = Binding {
        host: HostIndex(1),
        slot: 1,
    };
    assert_eq!(
        events,
        [
            Event::Bound {
                function: ids[0],
                binding,
                generation: Generation(1)
            },
            Event::ErrorMessage {
                requester: ids[0],
                severity: ErrorSeverity::NonFatal,
                binding: Some(binding)
            },
            Event::Unbound {
                function: ids[0],
                binding,
                mode: UnbindMode::Surprise,
                generation: Generation(2)
            },
        ]
    );
}

#[test]
fn a_binding_whose_device_is_gone_after_a_reboot_is_reported() {
    let mut rig = booted(true);
    let ids = functions(&rig);
    rig.manager
        .bind(
            ids[0],
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("the GPU");
    rig.manager
        .bind(
            ids[4],
            HostIndex(1),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("a NIC function");
    let mut flash = RamFlash::new(1024);
    rig.manager.save_config(&mut flash).expect("saved");
    let stored = persist::load(&mut flash)
        .expect("readable")
        .expect("a record");

    // The GPU was pulled while the switch was off; the NIC moved down one bus.
    let mut rig = booted(false);
    let restored = rig
        .manager
        .restore(&stored, &mut rig.plane.switch, &mut rig.host)
        .expect("restored");
    assert_eq!((restored.bound, restored.not_restored), (0, 2));
    assert_eq!(rig.manager.generation(), stored.generation.next());
    let lost: Vec<_> = rig
        .manager
        .events()
        .since(0)
        .filter_map(|e| match e.event {
            Event::BindingNotRestored {
                function, reason, ..
            } => Some((function, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        lost,
        [
            (ids[0], NotRestored::FunctionGone),
            (ids[4], NotRestored::FunctionGone)
        ]
    );
}
