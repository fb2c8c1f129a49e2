//! Publishes a greeting every 100 ms on topic "hello" (domain 0): run `hello_sub` next to it.
//!
//! `cargo run -p tachyon --example hello_pub -- [count]`
//! (`TACHYON_CONFIG=file.toml` configures it: see `docs/configuration.md`)

use tachyon::prelude::*;

/// The sample type: keyed by `id`.
#[derive(DdsType, Debug)]
#[dds(name = "hello::Hello")]
struct Hello {
    #[key]
    id: u32,
    count: u64,
    text: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The file `TACHYON_CONFIG` names (if any) configures the participant and, unless
    // RUST_LOG is set, the log filter: Tachyon, a library, installs no subscriber itself.
    let config = tachyon::Config::from_env()?;
    let filter = match (std::env::var_os("RUST_LOG"), config.log_filter()) {
        (None, Some(f)) => tracing_subscriber::EnvFilter::try_new(f)?,
        _ => tracing_subscriber::EnvFilter::from_default_env(),
    };
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let count: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    let participant = DomainParticipant::with_config(0, &config)?;
    let topic = participant.create_topic::<Hello>("hello")?;
    let writer = participant
        .create_publisher()?
        .create_datawriter(&topic, DataWriterQos::default().reliable().keep_last(10))?;
    println!("hello_pub: waiting for a subscriber ...");
    let matched = writer.get_statuscondition();
    matched.set_enabled_statuses(StatusMask::PUBLICATION_MATCHED);
    let mut waitset = WaitSet::new();
    waitset.attach_condition(&matched)?;
    while writer.get_publication_matched_status().current_count == 0 {
        waitset.wait(Duration::MAX)?;
    }
    for i in 0..count {
        let msg = Hello {
            id: 7,
            count: i,
            text: format!("hello, world #{i}"),
        };
        writer.write(&msg)?;
        println!("wrote {msg:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    writer.wait_for_acknowledgments(Duration::from_secs(5))?;
    Ok(())
}
