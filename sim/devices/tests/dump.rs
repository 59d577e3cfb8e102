//! Devices from `lspci -xxxx` dumps: parsing, typed errors with line
//! numbers, and the write semantics the model gives the dumped registers.

mod common;

use common::*;
use weft_devices::bench::Bench;
use weft_devices::dump::{parse, BarSizes, DumpDevice, DumpDeviceError, DumpError};
use weft_devices::pcie::Bdf;

const FIXTURE: &str = include_str!("fixtures/example-nvme.lspci");
const ID: Bdf = Bdf::new(5, 0, 0);
/// BAR0: 16 KiB 64-bit (slots 0-1); BAR2: 4 KiB 32-bit; BAR4: 256-byte I/O.
const SIZES: BarSizes = [Some(16 << 10), None, Some(4 << 10), None, Some(256), None];

fn device() -> DumpDevice {
    DumpDevice::from_text(FIXTURE, &[SIZES]).expect("the fixture is valid")
}

fn bench() -> Bench<DumpDevice> {
    let mut bench = Bench::new();
    bench.attach(5, device());
    bench
}

#[test]
fn the_fixture_parses_into_one_function_of_4096_bytes() {
    let functions = parse(FIXTURE).expect("valid");
    assert_eq!(functions.len(), 1);
    let function = &functions[0];
    assert_eq!(function.address, ID);
    assert!(function
        .description
        .starts_with("Non-Volatile memory controller"));
    assert_eq!(function.listed, 4096);
    assert_eq!(&function.bytes[0..4], &[0x1d, 0x1d, 0x01, 0x70]);
    assert_eq!(&function.bytes[0x100..0x104], &[0x01, 0x00, 0x02, 0x00]);
}

#[test]
fn identity_and_capabilities_read_back_from_the_dump() {
    let mut bench = bench();
    assert_eq!(bench.config_read(ID, 0x00), Ok(0x7001_1d1d));
    assert_eq!(bench.config_read(ID, 0x08), Ok(0x0108_0202));
    assert_eq!(find_cap(&mut bench, ID, 0x01), Some(0x40));
    assert_eq!(find_cap(&mut bench, ID, 0x05), Some(0x50));
    assert_eq!(find_cap(&mut bench, ID, 0x10), Some(0x70));
    assert_eq!(find_cap(&mut bench, ID, 0x11), Some(0xb0));
    assert_eq!(find_ext_cap(&mut bench, ID, 0x0001), Some(0x100));
}

#[test]
fn the_function_starts_as_after_reset() {
    let mut bench = bench();
    // Command 0; Status keeps Capabilities List (bit 4) and loses the
    // Received Master Abort event (bit 13, RW1C) the dump recorded.
    assert_eq!(bench.config_read(ID, 0x04), Ok(0x0010_0000));
    // BARs hold only their type bits.
    assert_eq!(bench.config_read(ID, 0x10), Ok(0x0000_0004));
    assert_eq!(bench.config_read(ID, 0x18), Ok(0));
    assert_eq!(bench.config_read(ID, 0x20), Ok(0x0000_0001));
    // MSI Enable (Message Control bit 0) and MSI-X Enable (bit 15) clear.
    assert_eq!(bench.config_read(ID, 0x50).map(|v| v >> 16), Ok(0x0080));
    assert_eq!(bench.config_read(ID, 0xb0).map(|v| v >> 16), Ok(0x001f));
    // AER status registers clear.
    assert_eq!(bench.config_read(ID, 0x104), Ok(0));
    assert_eq!(bench.config_read(ID, 0x110), Ok(0));
}

#[test]
fn bars_size_from_the_given_sizes() {
    let mut bench = bench();
    for register in [0x10u16, 0x14, 0x18, 0x1c, 0x20, 0x24] {
        bench
            .config_write(ID, register, u32::MAX, 0xf)
            .expect("write");
    }
    // 16 KiB 64-bit: low 0xFFFF_C004, upper all ones; 4 KiB 32-bit:
    // 0xFFFF_F000; 256-byte I/O: 0xFFFF_FF01; slots 3 and 5 unimplemented.
    let expected = [0xffff_c004, 0xffff_ffff, 0xffff_f000, 0, 0xffff_ff01, 0];
    for (slot, value) in expected.into_iter().enumerate() {
        assert_eq!(
            bench.config_read(ID, 0x10 + 4 * slot as u16),
            Ok(value),
            "BAR{slot}"
        );
    }
    bench.config_write(ID, 0x10, 0, 0xf).expect("write");
    bench.config_write(ID, 0x14, 0, 0xf).expect("write");
    bench.config_write(ID, 0x18, 0, 0xf).expect("write");
    bench.config_write(ID, 0x20, 0, 0xf).expect("write");
    let sizes: Vec<_> = size_bars(&mut bench, ID)
        .iter()
        .map(|bar| bar.map(|bar| bar.bar.size))
        .collect();
    assert_eq!(
        sizes,
        [Some(16 << 10), None, Some(4096), None, Some(256), None]
    );
}

#[test]
fn command_is_rw_in_the_spec_bits_and_status_is_rw1c() {
    let mut bench = bench();
    bench.config_write(ID, 0x04, 0xffff, 0b0011).expect("write");
    // I/O, Memory, Bus Master, Parity Error Response, SERR# Enable,
    // Interrupt Disable: bits 0, 1, 2, 6, 8, 10 (§7.5.1.1.3).
    assert_eq!(bench.config_read(ID, 0x04).map(|v| v & 0xffff), Ok(0x0547));
    // Writing ones to Status changes nothing that is not set.
    bench
        .config_write(ID, 0x04, 0xffff_0000, 0b1100)
        .expect("write");
    assert_eq!(bench.config_read(ID, 0x04).map(|v| v >> 16), Ok(0x0010));
}

#[test]
fn msi_is_programmable_through_the_masks_its_builder_gives() {
    let mut bench = bench();
    setup_msi(&mut bench, ID, 0xfee0_3000, 0x4055);
    assert_eq!(bench.config_read(ID, 0x54), Ok(0xfee0_3000));
    assert_eq!(bench.config_read(ID, 0x5c), Ok(0x4055));
    assert_eq!(bench.config_read(ID, 0x50).map(|v| v >> 16), Ok(0x0081));
    // The capability header (ID, next pointer) stays read-only.
    bench.config_write(ID, 0x50, 0xffff, 0b0011).expect("write");
    assert_eq!(bench.config_read(ID, 0x50).map(|v| v & 0xffff), Ok(0x7005));
}

#[test]
fn device_control_takes_mps_and_mrrs_and_device_ids_are_read_only() {
    let mut bench = bench();
    set_payload_sizes(&mut bench, ID, 1, 3);
    let control = bench.config_read(ID, 0x78).expect("read") & 0xffff;
    assert_eq!((control >> 5 & 7, control >> 12 & 7), (1, 3));
    bench.config_write(ID, 0x00, 0, 0xf).expect("write");
    assert_eq!(bench.config_read(ID, 0x00), Ok(0x7001_1d1d));
}

#[test]
fn memory_bars_are_backed_by_ram_once_enabled() {
    let mut bench = bench();
    place_bar(&mut bench, ID, 0, 0x9_0000_0000, true);
    place_bar(&mut bench, ID, 2, 0xc000_0000, false);
    assert!(bench.read(0x9_0000_0000, 4).is_err(), "no decode yet");
    enable(&mut bench, ID);
    bench.write(0x9_0000_0ffe, &[1, 2, 3, 4, 5]);
    assert_eq!(
        bench.read(0x9_0000_0ffc, 8),
        Ok(vec![0, 0, 1, 2, 3, 4, 5, 0])
    );
    bench.write_u32(0xc000_0010, 0xdead_beef);
    assert_eq!(bench.read_u32(0xc000_0010), Ok(0xdead_beef));
    assert_eq!(bench.read_u32(0x9_0000_0010), Ok(0));
}

#[test]
fn absent_functions_are_unsupported_requests() {
    let mut bench = bench();
    assert!(bench.config_read(Bdf::new(5, 0, 1), 0).is_err());
    assert!(bench.config_read(Bdf::new(5, 1, 0), 0).is_err());
}

#[test]
fn a_multi_function_dump_answers_per_function() {
    let second =
        FIXTURE
            .replacen("05:00.0", "05:00.1", 1)
            .replacen("00: 1d 1d 01 70", "00: 1d 1d 02 70", 1);
    let text = format!("{FIXTURE}\n{second}");
    let mut bench = Bench::new();
    bench.attach(
        5,
        DumpDevice::from_text(&text, &[SIZES, SIZES]).expect("valid"),
    );
    assert_eq!(bench.config_read(ID, 0), Ok(0x7001_1d1d));
    assert_eq!(bench.config_read(Bdf::new(5, 0, 1), 0), Ok(0x7002_1d1d));
}

fn with_line(line: usize, replacement: &str) -> String {
    let mut lines: Vec<&str> = FIXTURE.lines().collect();
    lines[line - 1] = replacement;
    lines.join("\n")
}

#[test]
fn malformed_lines_are_reported_with_their_line_number() {
    let cases = [
        (
            with_line(3, "10: 04 00 60 fe 00 zz 00 00 00 40 61 fe 00 00 00 00"),
            DumpError::BadByte {
                line: 3,
                column: 6,
                text: "zz".into(),
            },
        ),
        (
            with_line(4, "20: 01 e0 00 00"),
            DumpError::WrongByteCount { line: 4, count: 4 },
        ),
        (
            with_line(5, "38: 00 00 00 00 40 00 00 00 00 00 00 00 0b 01 00 00"),
            DumpError::MisalignedOffset {
                line: 5,
                offset: 0x38,
            },
        ),
        (
            with_line(6, "1000: 00 00 00 00 40 00 00 00 00 00 00 00 0b 01 00 00"),
            DumpError::OffsetOutOfRange {
                line: 6,
                offset: 0x1000,
            },
        ),
        (
            with_line(7, "x0: 00 00 00 00 40 00 00 00 00 00 00 00 0b 01 00 00"),
            DumpError::BadOffset {
                line: 7,
                text: "x0".into(),
            },
        ),
        (
            with_line(8, "10: 04 00 60 fe 00 00 00 00 00 40 61 fe 00 00 00 00"),
            DumpError::DuplicateOffset {
                line: 8,
                offset: 0x10,
            },
        ),
        (
            with_line(1, "05:00 Non-Volatile memory controller"),
            DumpError::BadHeader {
                line: 1,
                text: "05:00".into(),
            },
        ),
        (with_line(1, ""), DumpError::DataBeforeHeader { line: 2 }),
        (String::from("\n\n"), DumpError::Empty),
    ];
    for (text, expected) in cases {
        assert_eq!(parse(&text), Err(expected.clone()));
        assert!(expected.to_string().contains(&match &expected {
            DumpError::Empty => "no function".to_string(),
            DumpError::DataBeforeHeader { line }
            | DumpError::BadHeader { line, .. }
            | DumpError::BadOffset { line, .. }
            | DumpError::MisalignedOffset { line, .. }
            | DumpError::OffsetOutOfRange { line, .. }
            | DumpError::BadByte { line, .. }
            | DumpError::WrongByteCount { line, .. }
            | DumpError::DuplicateOffset { line, .. } => format!("line {line}"),
        }));
    }
}

#[test]
fn bar_size_errors_are_typed() {
    let upper = [Some(16 << 10), Some(4096), None, None, None, None];
    assert_eq!(
        DumpDevice::from_text(FIXTURE, &[upper]).map(|_| ()),
        Err(DumpDeviceError::SizeForUpperHalf {
            function: ID,
            slot: 1
        })
    );
    let odd = [Some(3000), None, None, None, None, None];
    assert!(matches!(
        DumpDevice::from_text(FIXTURE, &[odd]),
        Err(DumpDeviceError::Bar { .. })
    ));
    assert_eq!(
        DumpDevice::from_text(FIXTURE, &[]).map(|_| ()),
        Err(DumpDeviceError::SizeListCount {
            functions: 1,
            size_lists: 0
        })
    );
}

#[test]
fn a_lspci_xxx_dump_of_256_bytes_is_accepted() {
    let short: String = FIXTURE.lines().take(17).collect::<Vec<_>>().join("\n");
    let functions = parse(&short).expect("valid");
    assert_eq!(functions[0].listed, 256);
    assert_eq!(functions[0].bytes[0x100], 0);
}
