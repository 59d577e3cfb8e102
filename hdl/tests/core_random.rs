//! Random instruction streams on the RTL core and the ISS in lock-step:
//! valid encodings of every instruction (with some raw words), random
//! register values (half of them pointing into data RAM), a trap handler
//! that returns past exceptions, and interrupt lines toggling at random
//! cycles. Every retirement — PC, instruction, register write, memory
//! write, trap — must agree, and so must the final registers and data RAM.

use proptest::prelude::*;
use weft_hdl::core::Lockstep;
use weft_iss::csr::{MIE, MSTATUS, MTVEC};
use weft_iss::encode::{self as e, encode};
use weft_iss::strategy::any_instruction;
use weft_iss::{Hart, HarvardBus, Instruction, Interrupt};
use weft_regs::{DATA_RAM_BASE, DATA_RAM_SIZE};

/// One slot of a random program: a valid instruction or any 32-bit word.
/// Jump and branch offsets are folded into ±256 bytes so that control
/// mostly stays inside the random code rather than leaving instruction RAM.
fn any_word() -> impl Strategy<Value = u32> {
    prop_oneof![
        8 => any_instruction().prop_map(|i| encode(&near(i))),
        1 => any::<u32>(),
    ]
}

/// `insn` with a jump or branch offset folded into ±256 bytes (keeping
/// its low bits, so misaligned targets still occur).
fn near(insn: Instruction) -> Instruction {
    use Instruction as I;
    let fold = |offset: i32| offset % 256;
    match insn {
        I::Jal { rd, offset } => I::Jal {
            rd,
            offset: fold(offset),
        },
        I::Beq { rs1, rs2, offset } => I::Beq {
            rs1,
            rs2,
            offset: fold(offset),
        },
        I::Bne { rs1, rs2, offset } => I::Bne {
            rs1,
            rs2,
            offset: fold(offset),
        },
        I::Blt { rs1, rs2, offset } => I::Blt {
            rs1,
            rs2,
            offset: fold(offset),
        },
        I::Bge { rs1, rs2, offset } => I::Bge {
            rs1,
            rs2,
            offset: fold(offset),
        },
        I::Bltu { rs1, rs2, offset } => I::Bltu {
            rs1,
            rs2,
            offset: fold(offset),
        },
        I::Bgeu { rs1, rs2, offset } => I::Bgeu {
            rs1,
            rs2,
            offset: fold(offset),
        },
        other => other,
    }
}

/// A random program and the stimulus around it.
#[derive(Debug, Clone)]
struct Case {
    words: Vec<u32>,
    regs: Vec<u32>,
    in_data: Vec<bool>,
    vectored: bool,
    interrupts_enabled: bool,
    /// Interrupt pulses: (first cycle, line, cycles high).
    irqs: Vec<(u64, usize, u64)>,
}

fn any_case(max_words: usize) -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(any_word(), 64..max_words),
        prop::collection::vec(any::<u32>(), 31),
        prop::collection::vec(any::<bool>(), 31),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec((0u64..1500, 0usize..3, 1u64..24), 0..24),
    )
        .prop_map(
            |(words, regs, in_data, vectored, interrupts_enabled, irqs)| Case {
                words,
                regs,
                in_data,
                vectored,
                interrupts_enabled,
                irqs,
            },
        )
}

/// Lays out preamble, random code, vector table and handler; returns the
/// image (from address 0).
fn image(case: &Case) -> Vec<u32> {
    // The preamble: every register, then the trap CSRs.
    let mut preamble = Vec::new();
    for (i, (&v, &d)) in case.regs.iter().zip(&case.in_data).enumerate() {
        let v = if d {
            DATA_RAM_BASE + (v % DATA_RAM_SIZE)
        } else {
            v
        };
        preamble.extend(e::li(i as u8 + 1, v));
    }
    // li x31 + csrw mtvec, li x31 + csrw mie, csrwi mstatus, li x31.
    let csr_setup = 9;
    let start = 4 * (preamble.len() as u32 + csr_setup);
    let table = start + 4 * case.words.len() as u32;
    let handler = table + 4 * 12;
    let mtvec = table | u32::from(case.vectored);
    preamble.extend(e::li(31, mtvec));
    preamble.push(e::csrrw(0, MTVEC, 31));
    preamble.extend(e::li(31, 0x888));
    preamble.push(e::csrrw(0, MIE, 31));
    preamble.push(e::csrrwi(
        0,
        MSTATUS,
        if case.interrupts_enabled { 8 } else { 0 },
    ));
    preamble.extend(e::li(31, case.regs[30]));
    assert_eq!(4 * preamble.len() as u32, start);
    let mut words = preamble;
    words.extend(&case.words);
    // Vector table: every entry (exceptions at 0, interrupts at 4 × cause).
    for slot in 0..12u32 {
        words.push(e::jal(0, (handler - (table + 4 * slot)) as i32));
    }
    // Handler: keep the program's x31 in mscratch; return past an
    // exception, to the same instruction after an interrupt, and after a
    // fetch fault (whose mepc + 4 would fault again) to a point in the
    // random code picked by the faulting address.
    words.extend([
        e::csrrw(31, 0x340, 31),
        e::csrrs(31, 0x342, 0),
        e::blt(31, 0, 40), // interrupt: to restore
        e::addi(31, 31, -1),
        e::bne(31, 0, 20), // not a fetch fault: to advance
        e::csrrs(31, 0x343, 0),
        e::andi(31, 31, 0xfc),
        e::addi(31, 31, start as i32),
        e::jal(0, 12), // to set
        // advance:
        e::csrrs(31, 0x341, 0),
        e::addi(31, 31, 4),
        // set:
        e::csrrw(0, 0x341, 31),
        // restore:
        e::csrrw(31, 0x340, 31),
        e::mret(),
    ]);
    words
}

fn run_case(case: &Case, cycles: u64) -> Result<(), TestCaseError> {
    let words = image(case);
    let mut iss = Hart::new(HarvardBus::reference());
    iss.bus_mut()
        .write_words(0, &words)
        .expect("fits instruction RAM");
    let mut bus = HarvardBus::reference();
    bus.write_words(0, &words).expect("fits instruction RAM");
    let mut l = Lockstep::new(bus, iss).expect("the core builds");
    for cycle in 0..cycles {
        // Level-sensitive lines: each is high while any of its pulses lasts.
        for (line, irq) in Interrupt::BY_PRIORITY.into_iter().enumerate() {
            let high = case
                .irqs
                .iter()
                .any(|&(from, l, len)| l == line && (from..from + len).contains(&cycle));
            l.set_interrupt(irq, high);
        }
        if let Err(d) = l.cycle() {
            return Err(TestCaseError::fail(d.to_string()));
        }
    }
    // A store written in the last cycle retires in the next one.
    if let Err(d) = l.retire_stores_in_flight() {
        return Err(TestCaseError::fail(d.to_string()));
    }
    for r in 1..32 {
        let iss = l.iss().reg(r as u8);
        prop_assert_eq!(l.rtl().register(r), iss, "x{}", r);
    }
    let rtl_ram = l.rtl().bus().data_ram().to_vec();
    prop_assert!(rtl_ram == l.iss().bus().data_ram(), "data RAM differs");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_streams_agree_with_the_iss(case in any_case(96)) {
        run_case(&case, 500)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// The long version: `cargo test -p weft-hdl --release --test core_random -- --ignored`.
    #[test]
    #[ignore = "long: about a minute in release"]
    fn many_random_streams_agree_with_the_iss(case in any_case(128)) {
        run_case(&case, 1500)?;
    }
}
