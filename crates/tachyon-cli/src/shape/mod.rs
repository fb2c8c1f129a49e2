//! `tachyon shape`, and the `shape_main` binary: the application of the OMG DDS-RTPS
//! interoperability suite (github.com/omg-dds/dds-rtps), with the options, printed lines and
//! exit codes of its `srcCxx/shape_main.cxx`, so the suite's `interoperability_report.py`
//! drives Tachyon as it drives every other vendor. Every behaviour comes from the library;
//! this module only maps options to QoS and prints what happens (docs/interop.md).

mod coherent;
mod listeners;
mod options;
mod publisher;
mod subscriber;
mod types;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tachyon::qos::{AccessScope, DataRepresentation, DurabilityKind, Presentation};
use tachyon::{DomainParticipant, Topic};

use options::{usage, Parsed};
pub use options::{Durability, FinalState, Scope, ShapeOptions};
use types::ShapeType;

/// shape_main's exit codes.
const ERROR_PARSING_ARGUMENTS: u8 = 1;
const ERROR_INITIALIZING: u8 = 2;
const ERROR_RUNNING: u8 = 3;

/// Runs shape_main with `args` (without the program name); returns the exit code.
pub fn main_with(prog: &str, args: &[String]) -> u8 {
    let mut messages = Vec::new();
    let parsed = ShapeOptions::parse(args, &mut messages);
    for m in &messages {
        println!("{m}");
    }
    let options = match parsed {
        Parsed::Help => {
            print!("{}", usage(prog));
            return 0;
        }
        Parsed::Invalid => {
            print!("{}", usage(prog));
            return ERROR_PARSING_ARGUMENTS;
        }
        Parsed::Run(o) => *o,
    };
    if options.debug {
        println!("{}", options.describe());
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(signal, Arc::clone(&stop)) {
            println!("failed to install the signal handler: {e}");
            return ERROR_INITIALIZING;
        }
    }
    let app = match App::initialize(&options, stop) {
        Ok(app) => app,
        Err(e) => {
            println!("{e}");
            return ERROR_INITIALIZING;
        }
    };
    if let Err(e) = app.run(&options) {
        println!("{e}");
        return ERROR_RUNNING;
    }
    println!("Done.");
    0
}

/// The participant, its topics and the role's endpoints.
struct App {
    participant: DomainParticipant,
    role: Role,
    stop: Arc<AtomicBool>,
}

enum Role {
    Publisher(publisher::ShapePublisher),
    Subscriber(subscriber::ShapeSubscriber),
}

impl App {
    fn initialize(o: &ShapeOptions, stop: Arc<AtomicBool>) -> Result<App, String> {
        // TACHYON_CONFIG applies, as it does to `DomainParticipant::new`.
        let config = tachyon::Config::from_env()
            .map_err(|e| format!("failed to create participant: {e}"))?;
        let mut settings = config.settings(o.domain_id);
        if !o.periodic_announcement.is_zero() {
            settings.announce_period = Some(o.periodic_announcement);
        }
        let participant = DomainParticipant::with_settings(o.domain_id, &settings)
            .map_err(|e| format!("failed to create participant: {e}"))?;
        let base = o.topic_name.as_deref().unwrap_or_default();
        let mut topics: Vec<Topic<ShapeType>> = Vec::new();
        for i in 0..o.num_topics {
            let name = topic_name(base, i);
            println!("Create topic: {name}");
            let topic = participant
                .create_topic::<ShapeType>(&name)
                .map_err(|e| format!("failed to create topic <{name}>: {e}"))?;
            topics.push(topic);
        }
        let role = if o.publish {
            Role::Publisher(publisher::ShapePublisher::new(&participant, &topics, o)?)
        } else {
            Role::Subscriber(subscriber::ShapeSubscriber::new(&participant, &topics, o)?)
        };
        Ok(App {
            participant,
            role,
            stop,
        })
    }

    fn run(&self, o: &ShapeOptions) -> Result<(), String> {
        let r = match &self.role {
            Role::Publisher(p) => p.run(o, &self.stop),
            Role::Subscriber(s) => s.run(o, &self.stop),
        };
        report_xdp(&self.participant, o.publish);
        self.participant.close();
        r
    }
}

/// With `TACHYON_SHAPE_XDP_REPORT=FILE` and a participant on AF_XDP (`[xdp]` in
/// TACHYON_CONFIG): a line appended to FILE saying what went through its socket, so that
/// `interop/shape/run-suite.py --xdp` can tell which runs used it (the suite keeps the
/// applications' output of failed cases only). Nothing is printed: the output stays the
/// suite's reference application's.
fn report_xdp(participant: &DomainParticipant, publish: bool) {
    let Some(path) = std::env::var_os("TACHYON_SHAPE_XDP_REPORT") else {
        return;
    };
    let x = participant.statistics().xdp;
    let line = format!(
        "{} {} XDP sent {} received {} kernel {}\n",
        std::process::id(),
        if publish { "publisher" } else { "subscriber" },
        x.sent,
        x.received,
        x.via_kernel
    );
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    if let Err(e) = written {
        eprintln!("TACHYON_SHAPE_XDP_REPORT: cannot append to {path:?}: {e}");
    }
}

/// `Square`, `Square1`, `Square2`…: the names of `--num-topics` topics.
fn topic_name(base: &str, i: u32) -> String {
    if i == 0 {
        base.to_owned()
    } else {
        format!("{base}{i}")
    }
}

/// `BLUE`, `BLUE1`, `BLUE2`…: the colors of `--num-instances` instances.
fn instance_color(base: &str, j: u32) -> String {
    if j == 0 {
        base.to_owned()
    } else {
        format!("{base}{j}")
    }
}

/// DURABILITY of `-D`.
fn durability(d: Durability) -> DurabilityKind {
    match d {
        Durability::Volatile => DurabilityKind::Volatile,
        Durability::TransientLocal => DurabilityKind::TransientLocal,
        Durability::Transient => DurabilityKind::Transient,
        Durability::Persistent => DurabilityKind::Persistent,
    }
}

/// DATA_REPRESENTATION of `-x`.
fn representation(x: u8) -> DataRepresentation {
    if x == 2 {
        DataRepresentation::Xcdr2
    } else {
        DataRepresentation::Xcdr1
    }
}

/// PRESENTATION of `--coherent`, `--ordered` and `--access-scope` (the scope applies only
/// with one of the other two, as in shape_main).
fn presentation(o: &ShapeOptions) -> Presentation {
    let mut p = Presentation::default();
    if o.coherent || o.ordered {
        p.coherent_access = o.coherent;
        p.ordered_access = o.ordered;
        p.access_scope = match o.access_scope {
            Scope::Instance => AccessScope::Instance,
            Scope::Topic => AccessScope::Topic,
            Scope::Group => AccessScope::Group,
        };
    }
    p
}

/// The DataWriterQos or DataReaderQos shape_main's options give both kinds of endpoint:
/// RELIABILITY (`-b`/`-r`), DURABILITY (`-D`), DATA_REPRESENTATION (`-x`), OWNERSHIP
/// EXCLUSIVE (`-s` other than -1), DEADLINE (`-f`) and HISTORY (`-k`).
macro_rules! endpoint_qos {
    ($o:expr, $qos:expr) => {{
        let o: &$crate::shape::ShapeOptions = $o;
        let mut q = $qos
            .durability($crate::shape::durability(o.durability))
            .representation(&[$crate::shape::representation(o.data_representation)]);
        q = if o.reliable {
            q.reliable()
        } else {
            q.best_effort()
        };
        if o.ownership_strength != -1 {
            q = q.ownership(tachyon::qos::OwnershipKind::Exclusive);
        }
        if !o.deadline.is_zero() {
            q = q.deadline(o.deadline);
        }
        match o.history_depth {
            0 => q = q.keep_all(),
            d if d > 0 => q = q.keep_last(d.unsigned_abs() as usize),
            _ => {}
        }
        q
    }};
}
use endpoint_qos;

/// Sleeps `d`, waking early when `stop` is raised (SIGINT, SIGTERM).
fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let now = Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}
