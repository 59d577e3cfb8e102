//! The SPI flash driver against the ISS's flash controller and its NOR
//! part (`weft_iss::soc::SpiFlash`, which keeps the datasheet's rules:
//! programming only clears bits, a page wraps, Write Enable gates every
//! program and erase, the part is busy for its program and erase times):
//! what a region erases, writes and reads is what the part holds, at the
//! part's address of the region's span.

use weft_drivers::spi_flash::{self, Region, Wait};
use weft_drivers::CsrBus;
use weft_fabric::persist::{Flash, FlashError};
use weft_iss::soc::{NorFlash, Soc};
use weft_iss::{Bus, HarvardBus, Width};
use weft_regs::soc::spi_flash::{PAGE_SIZE, SECTOR_SIZE};

/// The reference SoC's window on the ISS; each access takes one clock
/// tick and a wait a poll period's worth, so the part's busy times pass.
struct IssBus {
    bus: HarvardBus,
    soc: Soc,
}

impl CsrBus for IssBus {
    fn read32(&mut self, address: u32) -> u32 {
        self.soc.advance(1);
        self.bus
            .load(address, Width::Word)
            .expect("the driver reads only SoC registers")
    }

    fn write32(&mut self, address: u32, value: u32) {
        self.soc.advance(1);
        self.bus
            .store(address, Width::Word, value)
            .expect("the driver writes only SoC registers");
    }
}

impl Wait for &mut IssBus {
    fn wait(&mut self) {
        // 100 µs at the reference 125 MHz core clock.
        self.soc.advance(12_500);
    }
}

fn board() -> IssBus {
    let mut bus = HarvardBus::reference();
    let soc = Soc::attach_with_flash(&mut bus, NorFlash::reference()).expect("the SoC maps");
    IssBus { bus, soc }
}

#[test]
fn a_region_erases_writes_across_a_page_and_reads_back_at_its_span() {
    let mut board = board();
    spi_flash::configure(&mut board);
    let span = spi_flash::IMAGE_B;
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    // From 10 bytes before a page's end: the write is split at the page.
    let at = PAGE_SIZE - 10;
    {
        let mut region = Region::new(span, &mut board);
        region.erase(0, SECTOR_SIZE).expect("the sector erases");
        region.write(at, &data).expect("the bytes program");
        let mut back = vec![0; data.len() + 2];
        region.read(at - 1, &mut back).expect("the bytes read");
        assert_eq!(back[0], 0xFF, "erased before");
        assert_eq!(&back[1..=data.len()], &data[..]);
        assert_eq!(back[data.len() + 1], 0xFF, "erased after");
    }
    let part = board.soc.spi_flash.contents();
    let start = (span.start + at) as usize;
    assert_eq!(&part[start..start + data.len()], &data[..]);
    assert!(
        part[..span.start as usize].iter().all(|&b| b == 0xFF),
        "nothing below the span was written"
    );
}

#[test]
fn ranges_outside_the_span_or_off_the_sectors_are_refused() {
    let mut board = board();
    let mut region = Region::new(spi_flash::BOOT_RECORD, &mut board);
    assert_eq!(
        region.read(2 * SECTOR_SIZE - 2, &mut [0; 4]),
        Err(FlashError::OutOfRange {
            offset: 2 * SECTOR_SIZE - 2,
            len: 4
        })
    );
    assert_eq!(
        region.erase(100, SECTOR_SIZE),
        Err(FlashError::Unaligned {
            offset: 100,
            len: SECTOR_SIZE
        })
    );
}
