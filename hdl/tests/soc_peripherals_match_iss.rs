//! Each RTL SoC peripheral against its `weft_iss::soc` model: the same
//! register accesses, one per clock cycle, with the models' time advanced
//! one tick per cycle, give the same reads, the same interrupt line, the
//! same bytes out and the same reset requests. The data port decoder
//! against `weft_iss::HarvardBus` with the same devices, the Ethernet
//! MAC, the SPI flash controller and the MDIO master attached: the same
//! accesses fault. The MAC itself is compared with
//! its model in `mac_matches_iss`.

use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::CsrTarget;
use weft_hdl::driver::{settle, CycleDriver};
use weft_hdl::soc::{DataDecoder, Gpio, Timer, Uart, Watchdog};
use weft_iss::soc::{NorFlash, SpiFlash, Watchdog as WatchdogModel};
use weft_iss::{Bus, DeviceFault, HarvardBus, Mmio, Width};
use weft_regs::csr::{CSR_BASE, CSR_SIZE};
use weft_regs::soc::{gpio, mac, mdio, spi_flash, timer, uart, watchdog, BLOCK_SIZE, SOC_BASE};
use weft_regs::{RegisterBlock, DATA_RAM_BASE, DATA_RAM_SIZE};

/// One clock cycle's register access.
#[derive(Clone, Debug)]
enum Access {
    Read(u32),
    Write(u32, u32),
    Idle,
}

/// Drives one cycle of `bus` with `access`; returns what the block
/// answered (in the next cycle) if it was a read.
fn cycle<B: Block>(
    d: &mut CycleDriver<B>,
    bus: fn(&mut B) -> &mut CsrTarget,
    access: &Access,
) -> Option<u32> {
    let port = bus(d.block());
    port.read.next = matches!(access, Access::Read(_));
    port.write.next = matches!(access, Access::Write(..));
    match *access {
        Access::Read(offset) => port.address.next = bits(u64::from(offset)),
        Access::Write(offset, value) => {
            port.address.next = bits(u64::from(offset));
            port.write_data.next = bits(u64::from(value));
        }
        Access::Idle => {}
    }
    d.tick().expect("the peripheral settles");
    let port = bus(d.block());
    let answered = port.read_valid.val();
    let data = port.read_data.val().to_u32();
    assert!(answered || data == 0, "read_data is 0 unless answering");
    matches!(access, Access::Read(_)).then(|| {
        assert!(answered, "a read is answered in the next cycle");
        data
    })
}

/// The same access on the model.
fn model_access(model: &mut dyn Mmio, access: &Access) -> Option<u32> {
    match *access {
        Access::Read(offset) => Some(model.read(offset, Width::Word).expect("a register")),
        Access::Write(offset, value) => {
            model.write(offset, Width::Word, value).expect("a register");
            None
        }
        Access::Idle => None,
    }
}

/// Register offsets of `block`.
fn offsets(block: &RegisterBlock) -> Vec<u32> {
    block.registers.iter().map(|r| r.offset).collect()
}

/// Values that reach the carries and compares: near 0, near all ones, anything.
fn edgy_value() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..4, (u32::MAX - 3)..=u32::MAX, any::<u32>()]
}

fn accesses(block: &'static RegisterBlock, value: BoxedStrategy<u32>) -> BoxedStrategy<Access> {
    let offset = proptest::sample::select(offsets(block));
    prop_oneof![
        3 => offset.clone().prop_map(Access::Read),
        3 => (offset, value).prop_map(|(o, v)| Access::Write(o, v)),
        1 => Just(Access::Idle),
    ]
    .boxed()
}

fn reset<B: Block>(d: &mut CycleDriver<B>, reset: fn(&mut B) -> &mut Signal<In, Bit>) {
    reset(d.block()).next = true;
    d.tick().expect("settles");
    reset(d.block()).next = false;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_timer_matches_the_iss_model(
        script in proptest::collection::vec(accesses(&timer::BLOCK, edgy_value().boxed()), 1..80)
    ) {
        let mut d = CycleDriver::new(Timer::new(), |t| &mut t.clock).expect("timer builds");
        reset(&mut d, |t| &mut t.reset);
        let mut model = weft_iss::soc::Timer::new();
        for (i, access) in script.iter().enumerate() {
            let rtl = cycle(&mut d, |t| &mut t.bus, access);
            let iss = model_access(&mut model, access);
            model.advance(1);
            prop_assert_eq!(rtl, iss, "access {} {:?}", i, access);
            prop_assert_eq!(
                d.block().interrupt.val(),
                model.interrupt_pending(),
                "MTIP after access {} {:?}", i, access
            );
        }
    }

    #[test]
    fn the_watchdog_matches_the_iss_model(
        script in proptest::collection::vec(
            prop_oneof![
                4 => accesses(
                    &watchdog::BLOCK,
                    prop_oneof![
                        0u32..24,
                        Just(watchdog::KICK_KEY),
                        Just(1),
                        any::<u32>(),
                    ].boxed(),
                ).prop_map(|a| vec![a]),
                1 => (1usize..30).prop_map(|n| vec![Access::Idle; n]),
            ],
            1..60,
        )
    ) {
        let mut d = CycleDriver::new(Watchdog::new(), |w| &mut w.clock).expect("watchdog builds");
        reset(&mut d, |w| &mut w.reset);
        let mut model = WatchdogModel::new();
        for (i, access) in script.iter().flatten().enumerate() {
            let rtl = cycle(&mut d, |w| &mut w.bus, access);
            let iss = model_access(&mut model, access);
            model.advance(1);
            prop_assert_eq!(rtl, iss, "access {} {:?}", i, access);
            let requested = model.take_reset_request();
            prop_assert_eq!(d.block().reset_request.val(), requested, "reset request after access {}", i);
        }
    }

    #[test]
    fn the_gpio_matches_the_iss_model(
        script in proptest::collection::vec(
            prop_oneof![
                3 => accesses(&gpio::BLOCK, any::<u32>().boxed()).prop_map(Ok),
                1 => any::<u32>().prop_map(Err),
            ],
            1..60,
        )
    ) {
        let mut d = CycleDriver::new(Gpio::new(), |g| &mut g.clock).expect("GPIO builds");
        reset(&mut d, |g| &mut g.reset);
        let model = weft_iss::soc::Gpio::new();
        let mut mmio: Box<dyn Mmio> = Box::new(model.clone());
        for (i, step) in script.iter().enumerate() {
            match step {
                Ok(access) => {
                    let rtl = cycle(&mut d, |g| &mut g.bus, access);
                    let iss = model_access(mmio.as_mut(), access);
                    prop_assert_eq!(rtl, iss, "access {} {:?}", i, access);
                }
                Err(levels) => {
                    // New pin levels: two cycles through the synchroniser.
                    d.block().inputs.next = bits(u64::from(*levels));
                    model.set_input(*levels);
                    cycle(&mut d, |g| &mut g.bus, &Access::Idle);
                    cycle(&mut d, |g| &mut g.bus, &Access::Idle);
                }
            }
            prop_assert_eq!(d.block().outputs.val().to_u32(), model.output());
        }
    }

    #[test]
    fn the_uart_matches_the_iss_model(
        script in proptest::collection::vec(
            prop_oneof![
                3 => accesses(&uart::BLOCK, any::<u32>().boxed()).prop_map(Ok),
                1 => any::<u8>().prop_map(Err),
            ],
            1..80,
        )
    ) {
        let mut d = CycleDriver::new(Uart::new(), |u| &mut u.clock).expect("UART builds");
        d.block().tx_ready.next = true;
        let model = weft_iss::soc::Uart::new();
        let mut mmio: Box<dyn Mmio> = Box::new(model.clone());
        let mut sent = Vec::new();
        let drain = |d: &mut CycleDriver<Uart>, access: &Access| {
            // The byte on the transmit stream leaves at this edge.
            settle(d.block()).expect("settles");
            let out = d.block().tx_valid.val().then(|| d.block().tx_data.val().to_u32() as u8);
            let answer = cycle(d, |u| &mut u.bus, access);
            (out, answer)
        };
        let mut received = 0;
        for (i, step) in script.iter().enumerate() {
            match step {
                Ok(access) => {
                    let (out, rtl) = drain(&mut d, access);
                    sent.extend(out);
                    let iss = model_access(mmio.as_mut(), access);
                    prop_assert_eq!(rtl, iss, "access {} {:?}", i, access);
                }
                // At most 16 bytes waiting: the receive FIFO's depth.
                Err(byte) if received < 16 => {
                    received += 1;
                    d.block().rx_data.next = bits(u64::from(*byte));
                    d.block().rx_valid.next = true;
                    settle(d.block()).expect("settles");
                    prop_assert!(d.block().rx_ready.val(), "the receive FIFO has room");
                    let (out, _) = drain(&mut d, &Access::Idle);
                    sent.extend(out);
                    d.block().rx_valid.next = false;
                    // The FIFO shows a byte written into it two cycles on.
                    for _ in 0..2 {
                        let (out, _) = drain(&mut d, &Access::Idle);
                        sent.extend(out);
                    }
                    model.receive(&[*byte]);
                }
                Err(_) => {}
            }
        }
        for _ in 0..20 {
            let (out, _) = drain(&mut d, &Access::Idle);
            sent.extend(out);
        }
        prop_assert_eq!(sent, model.transmitted());
    }
}

/// The CSR window as the ISS sees it in a system: a device that takes
/// whole words anywhere in the window.
struct WordsOnly;

impl Mmio for WordsOnly {
    fn read(&mut self, _offset: u32, width: Width) -> Result<u32, DeviceFault> {
        (width == Width::Word)
            .then_some(0)
            .ok_or(DeviceFault::UnsupportedWidth)
    }
    fn write(&mut self, _offset: u32, width: Width, _value: u32) -> Result<(), DeviceFault> {
        (width == Width::Word)
            .then_some(())
            .ok_or(DeviceFault::UnsupportedWidth)
    }
}

/// Addresses near every region's edges and registers, and anywhere.
fn data_address() -> impl Strategy<Value = u32> {
    let anchors = vec![
        0,
        weft_regs::INSTRUCTION_RAM_SIZE,
        weft_regs::BOOT_ROM_BASE,
        weft_regs::BOOT_ROM_BASE + weft_regs::BOOT_ROM_SIZE,
        DATA_RAM_BASE,
        DATA_RAM_BASE + DATA_RAM_SIZE,
        SOC_BASE,
        uart::LAYOUT.base,
        timer::LAYOUT.base,
        gpio::LAYOUT.base,
        watchdog::LAYOUT.base,
        mac::LAYOUT.base,
        mac::RX_DESCRIPTOR_LAYOUT.base,
        mac::TX_DESCRIPTOR_LAYOUT.base,
        mac::BUFFER_BASE,
        mac::TX_BUFFER_LAYOUT.base,
        mac::BUFFER_BASE + mac::BUFFER_SIZE,
        mac::LAYOUT.base + 0x1000,
        spi_flash::LAYOUT.base,
        spi_flash::BUFFER_LAYOUT.base,
        spi_flash::BUFFER_LAYOUT.base + BLOCK_SIZE,
        mdio::LAYOUT.base,
        CSR_BASE,
        CSR_BASE + CSR_SIZE,
    ];
    prop_oneof![
        4 => (proptest::sample::select(anchors), -0x20i32..0x120)
            .prop_map(|(a, d)| a.wrapping_add_signed(d)),
        1 => any::<u32>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_decoder_faults_where_the_iss_bus_faults(
        address in data_address(),
        width in proptest::sample::select(vec![Width::Byte, Width::Half, Width::Word]),
        store in any::<bool>(),
    ) {
        // Naturally aligned, as the core hands it to the port.
        let address = address & !(width.bytes() - 1);
        let mut bus = HarvardBus::reference();
        let devices: [(u32, Box<dyn Mmio>); 5] = [
            (uart::LAYOUT.base, Box::new(weft_iss::soc::Uart::new())),
            (timer::LAYOUT.base, Box::new(weft_iss::soc::Timer::new())),
            (gpio::LAYOUT.base, Box::new(weft_iss::soc::Gpio::new())),
            (watchdog::LAYOUT.base, Box::new(WatchdogModel::new())),
            (mdio::LAYOUT.base, Box::new(weft_iss::soc::Mdio::new())),
        ];
        for (base, device) in devices {
            bus.map_mmio(base, BLOCK_SIZE, device).expect("the SoC window is free");
        }
        weft_iss::soc::Mac::new().attach(&mut bus).expect("the MAC's window is free");
        SpiFlash::new(NorFlash::reference()).attach(&mut bus).expect("the flash's window is free");
        bus.map_mmio(CSR_BASE, CSR_SIZE, Box::new(WordsOnly)).expect("the CSR window is free");
        let iss_fault = if store {
            bus.store(address, width, 0).is_err()
        } else {
            bus.load(address, width).is_err()
        };
        let mut decoder = DataDecoder::new(DATA_RAM_SIZE, weft_regs::INSTRUCTION_RAM_SIZE);
        decoder.connect_all();
        let lanes = ((1u64 << width.bytes()) - 1) << (address & 3);
        decoder.address.next = bits(u64::from(address));
        decoder.byte_enable.next = bits(lanes);
        decoder.read.next = !store;
        decoder.write.next = store;
        settle(&mut decoder).expect("the decoder is combinational");
        prop_assert_eq!(decoder.fault.val(), iss_fault, "{:#010x} {:?}", address, width);
    }
}
