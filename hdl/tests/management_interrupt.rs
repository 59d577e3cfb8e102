//! The RTL mailbox's and injector's interrupt lines, as the register map
//! documents them (`weft_regs::csr::mailbox` and `inject`, INT_ENABLE and
//! INT_PENDING): level-sensitive, off at reset, raised while enabled and
//! the condition holds, lowered from the cycle after the write that ends it.

use rust_hdl::prelude::*;
use weft_hdl::csr;
use weft_hdl::driver::CycleDriver;
use weft_hdl::management::{Inject, Mailbox};
use weft_regs::csr::{inject, inject_data, mailbox};

fn mailbox_driver() -> CycleDriver<Mailbox> {
    CycleDriver::new(Mailbox::default(), |b| &mut b.clock).expect("well formed")
}

/// Pushes a 3-DW TLP for the CPU, one DW per cycle, as ingress does.
fn push_tlp(driver: &mut CycleDriver<Mailbox>) {
    for n in 0..3 {
        let block = driver.block();
        block.push.next = true;
        block.push_first.next = n == 0;
        block.push_last.next = n == 2;
        block.push_dw.next = 0x4a00_0001u32.to_bits();
        block.push_port.next = 1u32.to_bits();
        driver.tick().expect("settles");
    }
    driver.block().push.next = false;
}

fn line<B: Block>(driver: &mut CycleDriver<B>, interrupt: fn(&mut B) -> bool) -> bool {
    driver.settle().expect("settles");
    interrupt(driver.block())
}

fn mailbox_line(driver: &mut CycleDriver<Mailbox>) -> bool {
    line(driver, |b| b.irq.val())
}

fn read(driver: &mut CycleDriver<Mailbox>, address: u32) -> u32 {
    csr::read(driver, |b| &mut b.csr, address)
        .expect("settles")
        .expect("the mailbox answers its registers")
}

#[test]
fn the_mailbox_raises_its_line_only_while_enabled_and_a_tlp_waits() {
    let mut driver = mailbox_driver();
    assert!(!mailbox_line(&mut driver), "low at reset");
    push_tlp(&mut driver);
    assert!(!mailbox_line(&mut driver), "INT_ENABLE is 0 at reset");
    assert_eq!(read(&mut driver, mailbox::INT_PENDING.address(0, 0)), 0);
    let enable = mailbox::INT_ENABLE.address(0, 0);
    csr::write(&mut driver, |b| &mut b.csr, enable, u32::MAX).expect("settles");
    assert_eq!(read(&mut driver, enable), mailbox::ON_PENDING.mask());
    assert!(
        mailbox_line(&mut driver),
        "the TLP waiting raises it once enabled"
    );
    let pending = read(&mut driver, mailbox::INT_PENDING.address(0, 0));
    assert_eq!(mailbox::RAISED.decode(pending), 1);
    push_tlp(&mut driver);
    let pop = mailbox::POP.address(0, 0);
    csr::write(&mut driver, |b| &mut b.csr, pop, mailbox::DONE.mask()).expect("settles");
    assert!(mailbox_line(&mut driver), "one TLP still waits");
    csr::write(&mut driver, |b| &mut b.csr, pop, mailbox::DONE.mask()).expect("settles");
    assert!(
        !mailbox_line(&mut driver),
        "popped until empty: low after the write"
    );
    push_tlp(&mut driver);
    assert!(mailbox_line(&mut driver), "the next TLP raises it again");
    csr::write(&mut driver, |b| &mut b.csr, enable, 0).expect("settles");
    assert!(
        !mailbox_line(&mut driver),
        "disabled with a TLP still waiting"
    );
    let status = read(&mut driver, mailbox::STATUS.address(0, 0));
    assert_eq!(mailbox::PENDING.decode(status), 1);
}

#[test]
fn the_injector_raises_its_line_while_enabled_and_a_drop_is_flagged() {
    let mut driver = CycleDriver::new(Inject::default(), |b| &mut b.clock).expect("well formed");
    driver.block().ready.next = true;
    let inject_line = |d: &mut CycleDriver<Inject>| line(d, |b| b.irq.val());
    let write = |d: &mut CycleDriver<Inject>, address, value| {
        csr::write(d, |b| &mut b.csr, address, value).expect("settles")
    };
    assert!(!inject_line(&mut driver), "low at reset");
    // A SEND to a port the data plane does not have is dropped and flagged.
    write(&mut driver, inject_data::DATA.address(0, 0), 0x0400_0001);
    write(
        &mut driver,
        inject::SEND.address(0, 0),
        inject::PORT.encode(0xff) | inject::DWORDS.encode(3),
    );
    assert!(!inject_line(&mut driver), "INT_ENABLE is 0 at reset");
    write(
        &mut driver,
        inject::INT_ENABLE.address(0, 0),
        inject::ON_DROPPED.mask(),
    );
    assert!(
        inject_line(&mut driver),
        "the drop flagged raises it once enabled"
    );
    let pending = csr::read(
        &mut driver,
        |b| &mut b.csr,
        inject::INT_PENDING.address(0, 0),
    )
    .expect("settles");
    assert_eq!(pending, Some(inject::RAISED.mask()));
    write(
        &mut driver,
        inject::STATUS.address(0, 0),
        inject::MALFORMED.mask(),
    );
    assert!(inject_line(&mut driver), "NO_SUCH_PORT is still set");
    write(
        &mut driver,
        inject::STATUS.address(0, 0),
        inject::NO_SUCH_PORT.mask(),
    );
    assert!(
        !inject_line(&mut driver),
        "acknowledged: low after the write"
    );
}
