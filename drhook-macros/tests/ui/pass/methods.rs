use drhook::drhook;

struct Grid {
    cells: Vec<f64>,
}

impl Grid {
    #[drhook]
    fn new(n: usize) -> Self {
        Grid { cells: vec![0.0; n] }
    }

    #[drhook(name = "GRID:SMOOTH")]
    fn smooth(&mut self) {
        for c in &mut self.cells {
            *c += 1.0;
        }
    }

    #[drhook]
    fn sum(&self) -> f64 {
        self.cells.iter().sum()
    }

    #[drhook]
    fn into_cells(self) -> Vec<f64> {
        self.cells
    }
}

trait Step {
    #[drhook]
    fn step(&mut self) -> u32 {
        1
    }
}

impl Step for Grid {}

fn main() {
    let mut g = Grid::new(4);
    g.smooth();
    assert_eq!(g.sum(), 4.0);
    assert_eq!(g.step(), 1);
    assert_eq!(g.into_cells().len(), 4);
}
