//! A guard for tests that open real sockets: DDS multicast must never leave the machine.

/// Panic unless this process's network namespace has no interface but `lo`.
///
/// Call it first in every test that opens a transport. It reads `/proc/thread-self/net/dev`,
/// which shows the calling thread's network namespace (`/sys/class/net` does not: under
/// `unshare -n` it still lists the host's interfaces, because sysfs was mounted in the host's
/// namespace).
///
/// # Panics
/// When another interface is present or the list cannot be read.
pub fn require_isolated_network() {
    let path = "/proc/thread-self/net/dev";
    let dev = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "networked tests must run in an isolated network namespace: cannot read {path} ({e})"
        )
    });
    let others: Vec<&str> = interface_names(&dev).filter(|n| *n != "lo").collect();
    assert!(
        others.is_empty(),
        "networked tests must run in an isolated network namespace: use scripts/test.sh \
         (this namespace has {})",
        others.join(", ")
    );
}

/// The interface names of a `/proc/net/dev` listing.
fn interface_names(dev: &str) -> impl Iterator<Item = &str> {
    dev.lines()
        .skip(2)
        .filter_map(|line| line.split_once(':').map(|(name, _)| name.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_net_dev() {
        let dev = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n    lo:       0 0\n  eth0: 12 3\n";
        assert_eq!(interface_names(dev).collect::<Vec<_>>(), vec!["lo", "eth0"]);
    }
}
