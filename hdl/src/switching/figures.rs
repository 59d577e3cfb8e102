//! The switching figures issue targets name, printed alike by every benchmark that measures them.
//!
//! `switching-bench` (the switching core alone) and `top-bench` (the whole
//! data plane) measure the same things: idle latency of a posted write and
//! of a completion, and throughput of 256-byte writes under permutation,
//! uniform random and 2:1 hotspot traffic. [`Figures`] prints them as a
//! table beside their targets, or as JSON.

/// What a switching benchmark measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// Cycles from ingress sop to egress sop of a posted write through an idle switch.
    pub write_latency: u64,
    /// The same for a completion.
    pub completion_latency: u64,
    /// 256-byte writes under permutation traffic, in beats per cycle per port.
    pub permutation: f64,
    /// The same under uniform random destinations.
    pub uniform: f64,
    /// 2:1 hotspot: beats per cycle of the shared egress.
    pub hotspot_egress: f64,
    /// 2:1 hotspot: each of the two ingresses' share of it.
    pub hotspot_shares: [f64; 2],
    /// Simulated cycles per wall-clock second in the uniform run.
    pub cycles_per_second: f64,
}

impl Figures {
    /// One JSON object: `config` (a JSON object's members, without braces) and the figures.
    pub fn json(&self, config: &str) -> String {
        format!(
            "{{\"config\":{{{config}}},\
\"idle_latency_cycles\":{{\"posted_write\":{},\"completion\":{}}},\
\"throughput\":{{\"permutation\":{:.4},\"uniform\":{:.4},\"hotspot_egress\":{:.4},\"hotspot_shares\":[{:.4},{:.4}]}},\
\"sim_cycles_per_second\":{:.1}}}",
            self.write_latency,
            self.completion_latency,
            self.permutation,
            self.uniform,
            self.hotspot_egress,
            self.hotspot_shares[0],
            self.hotspot_shares[1],
            self.cycles_per_second
        )
    }

    /// A table under `title`, each figure beside its target.
    pub fn table(&self, title: &str) -> String {
        let row = |measure: &str, value: String, target: &str| {
            format!("{measure:<44} {value:>10} {target:>8}\n")
        };
        let mut out = format!("{title}\n");
        out += &row("measure", "value".into(), "target");
        out += &row(
            "idle latency, posted write (cycles)",
            self.write_latency.to_string(),
            "<= 8",
        );
        out += &row(
            "idle latency, completion (cycles)",
            self.completion_latency.to_string(),
            "<= 8",
        );
        out += &row(
            "256 B writes, permutation (beats/cycle/port)",
            format!("{:.3}", self.permutation),
            "1.00",
        );
        out += &row(
            "256 B writes, uniform random",
            format!("{:.3}", self.uniform),
            ">= 0.95",
        );
        out += &row(
            "2:1 hotspot, egress utilisation",
            format!("{:.3}", self.hotspot_egress),
            "1.00",
        );
        out += &row(
            "2:1 hotspot, shares of ingress 0/1",
            format!(
                "{:.3}/{:.3}",
                self.hotspot_shares[0], self.hotspot_shares[1]
            ),
            "0.5+-5%",
        );
        out += &row(
            "simulation speed (cycles/s, uniform run)",
            format!("{:.1}", self.cycles_per_second),
            "",
        );
        out
    }
}

/// The next of the benchmarks' random numbers (Marsaglia's xorshift64):
/// the same destinations on every run, for figures that compare.
pub fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// The seed the benchmarks start [`next_random`] from.
pub const SEED: u64 = 0x2545_f491_4f6c_dd1d;

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> Figures {
        Figures {
            write_latency: 4,
            completion_latency: 2,
            permutation: 0.6712,
            uniform: 0.95,
            hotspot_egress: 1.0,
            hotspot_shares: [0.5, 0.5],
            cycles_per_second: 84.66,
        }
    }

    #[test]
    fn random_numbers_repeat_from_the_seed_and_spread() {
        let draw = || {
            let mut state = SEED;
            (0..64)
                .map(|_| next_random(&mut state) % 8)
                .collect::<Vec<_>>()
        };
        let first = draw();
        assert_eq!(first, draw());
        assert!((0..8).all(|k| first.contains(&k)), "{first:?}");
    }

    #[test]
    fn the_json_is_one_object_with_the_config_inside() {
        let json = figures().json("\"ports\":8");
        assert!(json.starts_with("{\"config\":{\"ports\":8},"), "{json}");
        assert!(
            json.contains("\"posted_write\":4,\"completion\":2"),
            "{json}"
        );
        assert!(json.contains("\"permutation\":0.6712"), "{json}");
        assert!(json.ends_with("\"sim_cycles_per_second\":84.7}"), "{json}");
        assert_eq!(json.matches('{').count(), json.matches('}').count());
    }

    #[test]
    fn the_table_puts_each_figure_beside_its_target() {
        let table = figures().table("title");
        let row = table
            .lines()
            .find(|l| l.starts_with("256 B writes, permutation"))
            .expect("a permutation row");
        assert!(row.ends_with("0.671     1.00"), "{row}");
        assert_eq!(table.lines().count(), 9);
    }
}
