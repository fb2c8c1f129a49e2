//! The peers' shared command line (`interop/peers/peer_options.h` documents it).

use std::time::Duration;

/// Printed after a command-line error.
pub const USAGE: &str =
    "usage: tachyon_peer pub|sub [--type shape|ashape|ashape5|ashape_x64|sshape|large] [--topic NAME] \
[--best-effort] [--transient-local] [--depth N] [--partition P] [--representation 1|2] \
[--lease-ms N] [--deadline-ms N] [--strength N] [--exclusive] [--ordered] [--shapesize N] \
[--count N] [--instances K] [--prefix S] [--size BYTES] [--period-ms MS] [--dispose] \
[--wait-match N] [--wait-go] [--expect N] [--expect-dispose] [--expect-incompatible] \
[--expect-not-alive] [--filter EXPR] [--filter-param P]... [--read-period-ms MS] [--domain D] \
[--linger-ms MS] [--timeout-s S] [--local-reader]";

/// Another version of `AppendableShape`, for the type evolution cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evolved {
    /// `ashape5`: a member appended (assignable both ways).
    Appended,
    /// `ashape_x64`: `x` a `long long` (not assignable).
    Changed,
    /// `sshape`: the OMG suite's ShapeType exactly (`SuiteShape`), with its
    /// `sequence<uint8>`, which Cyclone DDS 0.10 describes as `sequence<octet>`.
    Suite,
}

/// What one run does.
#[derive(Debug)]
pub struct Options {
    pub publish: bool,
    pub domain: u32,
    pub large: bool,
    /// `--type ashape`: the OMG suite's `@appendable` ShapeType (`AppendableShape`).
    pub appendable: bool,
    /// `--type ashape5` / `ashape_x64`: another version of `AppendableShape` (type evolution).
    pub evolved: Option<Evolved>,
    pub topic: String,
    pub reliable: bool,
    pub transient_local: bool,
    pub depth: usize,
    pub partition: Vec<String>,
    pub representation: Option<u8>,
    pub lease: Option<Duration>,
    pub deadline: Option<Duration>,
    /// `--strength N` (pub): OWNERSHIP EXCLUSIVE with this strength.
    pub strength: Option<i32>,
    /// `--exclusive` (sub): OWNERSHIP EXCLUSIVE.
    pub exclusive: bool,
    /// `--ordered`: PRESENTATION TOPIC with ordered_access.
    pub ordered: bool,
    /// `--filter EXPR` (sub): read through a content-filtered topic.
    pub filter: Option<String>,
    /// `--filter-param P` (sub): the filter's %0, %1, ...
    pub filter_params: Vec<String>,
    /// `--read-period-ms MS` (sub): take only this often.
    pub read_period: Duration,
    pub shapesize: i32,
    pub count: u64,
    pub instances: u64,
    pub prefix: String,
    pub size: usize,
    pub period: Duration,
    pub dispose: bool,
    pub wait_go: bool,
    pub wait_match: u32,
    pub expect: u64,
    pub expect_dispose: bool,
    pub expect_incompatible: bool,
    pub expect_not_alive: bool,
    pub linger: Duration,
    /// `--local-reader` (pub, Tachyon only): a reader of the topic in a second participant of
    /// this process too (the in-process transport), its samples printed as `LOCAL` lines, and
    /// which transports the writer's participant sent through as a `PATHS` line.
    pub local_reader: bool,
    pub timeout: Duration,
}

impl Options {
    /// Parses the arguments after the program name.
    pub fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let publish = match args.next().as_deref() {
            Some("pub") => true,
            Some("sub") => false,
            other => return Err(format!("first argument must be pub or sub, not {other:?}")),
        };
        let mut o = Options {
            publish,
            domain: 0,
            large: false,
            appendable: false,
            evolved: None,
            topic: "interop".into(),
            reliable: true,
            transient_local: false,
            depth: 0,
            partition: Vec::new(),
            representation: None,
            lease: None,
            deadline: None,
            strength: None,
            exclusive: false,
            ordered: false,
            filter: None,
            filter_params: Vec::new(),
            read_period: Duration::ZERO,
            shapesize: 30,
            count: 10,
            instances: 1,
            prefix: "C".into(),
            size: 1024,
            period: Duration::ZERO,
            dispose: false,
            wait_go: false,
            wait_match: 1,
            expect: 0,
            expect_dispose: false,
            expect_incompatible: false,
            expect_not_alive: false,
            linger: Duration::ZERO,
            local_reader: false,
            timeout: Duration::from_secs(30),
        };
        while let Some(flag) = args.next() {
            let mut value = || args.next().ok_or(format!("{flag} needs a value"));
            match flag.as_str() {
                "--type" => {
                    o.evolved = None;
                    (o.large, o.appendable) = match value()?.as_str() {
                        "shape" => (false, false),
                        "ashape" => (false, true),
                        "ashape5" => {
                            o.evolved = Some(Evolved::Appended);
                            (false, true)
                        }
                        "ashape_x64" => {
                            o.evolved = Some(Evolved::Changed);
                            (false, true)
                        }
                        "sshape" => {
                            o.evolved = Some(Evolved::Suite);
                            (false, true)
                        }
                        "large" => (true, false),
                        v => {
                            return Err(format!(
                                "--type: shape, ashape, ashape5, ashape_x64, sshape or large, \
                                 not {v}"
                            ))
                        }
                    }
                }
                "--topic" => o.topic = value()?,
                "--best-effort" => o.reliable = false,
                "--transient-local" => o.transient_local = true,
                "--depth" => o.depth = number(&flag, &value()?)?,
                "--partition" => o.partition.push(value()?),
                "--representation" => match value()?.as_str() {
                    "1" => o.representation = Some(1),
                    "2" => o.representation = Some(2),
                    v => return Err(format!("--representation: 1 or 2, not {v}")),
                },
                "--lease-ms" => o.lease = Some(Duration::from_millis(number(&flag, &value()?)?)),
                "--deadline-ms" => {
                    o.deadline = Some(Duration::from_millis(number(&flag, &value()?)?))
                }
                "--strength" => o.strength = Some(number(&flag, &value()?)?),
                "--exclusive" => o.exclusive = true,
                "--ordered" => o.ordered = true,
                "--filter" => o.filter = Some(value()?),
                "--filter-param" => {
                    if o.filter_params.len() == 4 {
                        return Err("--filter-param: at most 4".into());
                    }
                    o.filter_params.push(value()?)
                }
                "--read-period-ms" => {
                    o.read_period = Duration::from_millis(number(&flag, &value()?)?)
                }
                "--shapesize" => o.shapesize = number(&flag, &value()?)?,
                "--count" => o.count = number(&flag, &value()?)?,
                "--instances" => o.instances = number::<u64>(&flag, &value()?)?.max(1),
                "--prefix" => o.prefix = value()?,
                "--size" => o.size = number(&flag, &value()?)?,
                "--period-ms" => o.period = Duration::from_millis(number(&flag, &value()?)?),
                "--dispose" => o.dispose = true,
                "--local-reader" => o.local_reader = true,
                "--wait-go" => o.wait_go = true,
                "--wait-match" => o.wait_match = number(&flag, &value()?)?,
                "--expect" => o.expect = number(&flag, &value()?)?,
                "--expect-dispose" => o.expect_dispose = true,
                "--expect-incompatible" => o.expect_incompatible = true,
                "--expect-not-alive" => o.expect_not_alive = true,
                "--linger-ms" => o.linger = Duration::from_millis(number(&flag, &value()?)?),
                "--domain" => o.domain = number(&flag, &value()?)?,
                "--timeout-s" => o.timeout = Duration::from_secs(number(&flag, &value()?)?),
                _ => return Err(format!("unknown option {flag}")),
            }
        }
        Ok(o)
    }
}

fn number<N: std::str::FromStr>(flag: &str, v: &str) -> Result<N, String> {
    v.parse()
        .map_err(|_| format!("{flag}: expected a non-negative number, not {v:?}"))
}
