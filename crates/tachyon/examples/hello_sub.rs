//! Prints the greetings `hello_pub` sends on topic "hello" (domain 0).
//!
//! `cargo run -p tachyon --example hello_sub -- [count]`
//! (`TACHYON_CONFIG=file.toml` configures it: see `docs/configuration.md`)

use tachyon::prelude::*;

/// The sample type: the same definition as the publisher's.
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
    let want: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    let participant = DomainParticipant::with_config(0, &config)?;
    let topic = participant.create_topic::<Hello>("hello")?;
    let reader = participant
        .create_subscriber()?
        .create_datareader(&topic, DataReaderQos::default().reliable().keep_last(10))?;
    // Wake when unread samples arrive, as with any DDS: a ReadCondition in a WaitSet.
    let unread = reader.create_readcondition(
        SampleStateMask::NOT_READ,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    let mut waitset = WaitSet::new();
    waitset.attach_condition(&unread)?;
    let mut got = 0;
    while got < want {
        if let Err(Error::Timeout) = waitset.wait(Duration::from_secs(30)) {
            eprintln!("hello_sub: nothing for 30 s, giving up after {got} samples");
            std::process::exit(1);
        }
        for s in reader.take_w_condition(&unread, usize::MAX)? {
            if let Some(h) = s.data {
                println!("got {h:?}");
                got += 1;
            }
        }
    }
    Ok(())
}
