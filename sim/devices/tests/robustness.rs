//! Nothing panics on bad input: random configuration reads and writes,
//! random register writes and random TLP bytes, on every model.

use std::time::Duration;

use proptest::prelude::*;
use weft_devices::bench::Bench;
use weft_devices::dump::DumpDevice;
use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::nvme::{Nvme, NvmeConfig};
use weft_devices::pcie::Bdf;
use weft_devices::{Device, Packet};

const FIXTURE: &str = include_str!("fixtures/example-nvme.lspci");

fn models() -> Vec<Box<dyn Device>> {
    vec![
        Box::new(
            Gpu::new(GpuConfig {
                memory_size: 1 << 20,
                ..GpuConfig::default()
            })
            .expect("valid"),
        ),
        Box::new(Nvme::new(NvmeConfig::default()).expect("valid")),
        Box::new(
            DumpDevice::from_text(
                FIXTURE,
                &[[Some(16 << 10), None, Some(4096), None, Some(256), None]],
            )
            .expect("valid"),
        ),
    ]
}

#[derive(Clone, Debug)]
enum Op {
    ConfigRead(u16, u16),
    ConfigWrite(u16, u16, u32, u8),
    MemoryWrite(u64, Vec<u8>),
    MemoryRead(u64, u16),
    Raw(Vec<u8>),
    Run,
}

fn op() -> impl Strategy<Value = Op> {
    // Routing IDs near the devices' own (bus 1) and anywhere.
    let target = prop_oneof![0x0100u16..0x0110, any::<u16>()];
    // Addresses near where the tests place BARs, and anywhere.
    let address = prop_oneof![
        0x8_0000_0000u64..0x8_0000_4000,
        0x8_e000_0000u64..0x8_e000_4000,
        0xe000_0000u64..0xe000_2000,
        any::<u64>(),
    ];
    prop_oneof![
        (target.clone(), 0u16..0x1000).prop_map(|(t, o)| Op::ConfigRead(t, o)),
        (target, 0u16..0x1000, any::<u32>(), 0u8..16)
            .prop_map(|(t, o, v, b)| Op::ConfigWrite(t, o, v, b)),
        (address.clone(), prop::collection::vec(any::<u8>(), 1..64))
            .prop_map(|(a, d)| Op::MemoryWrite(a, d)),
        (address, 1u16..256).prop_map(|(a, l)| Op::MemoryRead(a, l)),
        prop::collection::vec(any::<u8>(), 0..64).prop_map(Op::Raw),
        Just(Op::Run),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_operations_never_panic(ops in prop::collection::vec(op(), 1..80)) {
        for model in models() {
            let mut bench: Bench<Box<dyn Device>> = Bench::new();
            bench.set_tracing(false);
            bench.attach(1, model);
            // Give the BARs addresses and turn everything on first, so
            // random register writes reach the engines.
            for (register, value) in [(0x10u16, 0xe000_0000u32), (0x14, 0x8), (0x04, 0x6)] {
                let _ = bench.config_write(Bdf::new(1, 0, 0), register, value, 0xf);
            }
            for op in &ops {
                match op {
                    Op::ConfigRead(t, o) => { let _ = bench.config_read(Bdf(*t), *o); }
                    Op::ConfigWrite(t, o, v, b) => { let _ = bench.config_write(Bdf(*t), *o, *v, *b); }
                    Op::MemoryWrite(a, d) => bench.write(*a, d),
                    Op::MemoryRead(a, l) => { let _ = bench.read(*a, u64::from(*l)); }
                    Op::Raw(bytes) => {
                        if let Ok(packet) = Packet::parse(bytes) {
                            let device = bench.device_mut(0).expect("attached");
                            let _ = device.handle(Duration::ZERO, &packet);
                        }
                    }
                    Op::Run => { let _ = bench.run_rounds(200); }
                }
            }
            let _ = bench.run_rounds(200);
        }
    }

    #[test]
    fn direct_config_access_never_panics(target in any::<u16>(), offset in any::<u16>(), value in any::<u32>(), be in any::<u8>()) {
        for mut model in models() {
            let _ = model.config_write(Duration::ZERO, Bdf(target), offset, value, be);
            let _ = model.config_read(Duration::ZERO, Bdf(target), offset);
            let _ = model.poll(Duration::ZERO);
        }
    }

    #[test]
    fn dump_parsing_never_panics(text in "[0-9a-f: .\n]{0,400}") {
        let _ = weft_devices::dump::parse(&text);
    }
}
