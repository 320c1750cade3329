//! A toy weather model instrumented with Dr.Hook: the program the README's
//! first command runs.
//!
//! ```text
//! DR_HOOK=1 DR_HOOK_OPT=prof cargo run --release -p drhook-examples --bin weather
//! ```
//! writes `drhook.prof.1`. It has what real models have: a time loop, a
//! dynamics step with a recursive multigrid solver, column physics run by
//! several threads, and I/O regions that attach size information.

use std::sync::Barrier;

use drhook::drhook;

const NX: usize = 96;
const NY: usize = 64;
const NLEV: usize = 30;

struct Grid {
    t: Vec<f64>,
}

impl Grid {
    #[drhook(name = "SETUP:GRID_INIT")]
    fn new() -> Grid {
        let n = NX * NY * NLEV;
        let t = (0..n).map(|i| 250.0 + (i % 97) as f64 * 0.3).collect();
        Grid { t }
    }
}

/// Smoothing stencil on one level.
#[drhook(name = "DYN:STENCIL")]
fn stencil(level: &mut [f64]) {
    let old = level.to_vec();
    for j in 1..NY - 1 {
        for i in 1..NX - 1 {
            let k = j * NX + i;
            level[k] = 0.2 * (old[k] + old[k - 1] + old[k + 1] + old[k - NX] + old[k + NX]);
        }
    }
}

/// Recursive multigrid V-cycle (recursion is profiled exactly).
#[drhook(name = "DYN:MG_VCYCLE")]
fn vcycle(r: &mut [f64], depth: u32) -> f64 {
    let mut norm = 0.0;
    for v in r.iter_mut() {
        *v *= 0.5;
        norm += *v * *v;
    }
    if depth > 0 && r.len() > 16 {
        let mut coarse: Vec<f64> = r.chunks(2).map(|c| c.iter().sum::<f64>() * 0.5).collect();
        norm += vcycle(&mut coarse, depth - 1);
        for (i, v) in r.iter_mut().enumerate() {
            *v += 0.25 * coarse[i / 2];
        }
    }
    norm.sqrt()
}

#[drhook(name = "DYN:DYNAMICS")]
fn dynamics(g: &mut Grid) -> f64 {
    for level in g.t.chunks_mut(NX * NY).take(NLEV / 3) {
        stencil(level);
    }
    let mut rhs: Vec<f64> = g.t[..NX * NY].iter().map(|t| t - 273.15).collect();
    let _solve = drhook::scope!("DYN:SOLVE");
    vcycle(&mut rhs, 6)
}

/// Column physics: a cloud scheme on one column.
#[drhook(name = "PHYS:CLOUDSC")]
fn cloudsc(t: &mut [f64], q: &mut [f64]) {
    for k in 1..t.len() {
        let sat = 3.8e-3 * ((17.27 * (t[k] - 273.15)) / (t[k] - 35.86)).exp();
        if q[k] > sat {
            let cond = 0.5 * (q[k] - sat);
            q[k] -= cond;
            t[k] += 2.5e6 / 1004.0 * cond;
        }
        t[k] = 0.9 * t[k] + 0.1 * t[k - 1];
    }
}

#[drhook(name = "PHYS:RADIATION")]
fn radiation(t: &mut [f64]) {
    let mut flux = 0.0;
    for v in t.iter_mut().rev() {
        flux = 0.7 * flux + 5.67e-8 * v.powi(4) * 1e-6;
        *v -= flux * 1e-3;
    }
}

/// Physics over a block of columns, on one thread.
#[drhook(name = "PHYS:PHYSICS_BLOCK")]
fn physics_block(t: &mut [f64], q: &mut [f64]) {
    for (tc, qc) in t.chunks_mut(NLEV).zip(q.chunks_mut(NLEV)) {
        cloudsc(tc, qc);
        radiation(tc);
    }
}

#[drhook(name = "IO:WRITE_FIELDS")]
fn write_fields(g: &Grid, step: usize) -> u64 {
    let mut g_io = drhook::scope!("IO:ENCODE");
    let bytes: Vec<u8> =
        g.t.iter()
            .step_by(7)
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect();
    g_io.set_size(bytes.len() as u64);
    std::hint::black_box(&bytes);
    bytes.len() as u64 + step as u64
}

/// One thread's share of the physics columns (owned by that thread, as in
/// an OpenMP `PARALLEL` region with a static schedule).
struct Block {
    t: Vec<f64>,
    q: Vec<f64>,
}

impl Block {
    fn new(ncols: usize, seed: usize) -> Block {
        let n = ncols * NLEV;
        Block {
            t: (0..n).map(|i| 240.0 + ((i + seed) % 61) as f64).collect(),
            q: (0..n)
                .map(|i| 1e-3 * (((i + seed) % 17) as f64 + 1.0))
                .collect(),
        }
    }
}

#[drhook(name = "PHYS:PHYSICS")]
fn physics(b: &mut Block) {
    physics_block(&mut b.t, &mut b.q);
}

#[drhook(name = "MODEL:STEP")]
fn step(g: &mut Grid, n: usize) -> f64 {
    let r = dynamics(g);
    if n.is_multiple_of(4) {
        write_fields(g, n);
    }
    r
}

/// The time loop run by every thread of the team: thread 1 also does the
/// dynamics and the output; all threads do the physics on their columns.
#[drhook(name = "MODEL:TEAM_LOOP")]
fn team_loop(
    rank: usize,
    nsteps: usize,
    nthreads: usize,
    barrier: &Barrier,
    grid: Option<&mut Grid>,
) -> f64 {
    let mut block = Block::new(NX * NY / nthreads, rank);
    let mut grid = grid;
    let mut r = 0.0;
    for n in 0..nsteps {
        if let Some(g) = grid.as_deref_mut() {
            r += step(g, n);
        }
        barrier.wait();
        physics(&mut block);
        barrier.wait();
    }
    r + block.q.iter().sum::<f64>()
}

#[drhook(name = "MODEL:MAIN")]
fn run(nsteps: usize, nthreads: usize) -> f64 {
    let mut g = Grid::new();
    let barrier = Barrier::new(nthreads);
    std::thread::scope(|s| {
        let workers: Vec<_> = (1..nthreads)
            .map(|rank| {
                let barrier = &barrier;
                s.spawn(move || team_loop(rank, nsteps, nthreads, barrier, None))
            })
            .collect();
        let mine = team_loop(0, nsteps, nthreads, &barrier, Some(&mut g));
        mine + workers
            .into_iter()
            .map(|w| w.join().unwrap_or(0.0))
            .sum::<f64>()
    })
}

fn main() {
    let nsteps = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let nthreads = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4usize)
        .max(1);
    let check = run(nsteps, nthreads);
    println!("weather: {nsteps} steps on {nthreads} threads, checksum {check:.6e}");
    if drhook::is_enabled() {
        eprintln!(
            "weather: Dr.Hook is on; the profile (if DR_HOOK_OPT asks for one) is written at exit"
        );
    }
}
