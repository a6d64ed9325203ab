//! The commit graph in ASCII, as `git log --graph` draws it: one lane per line of history
//! still expected, `*` for the commit of a row, `|` for the other lanes; a merge opens a
//! lane for each further parent (`|\`), and two lanes that reach the same commit join
//! (`|/`, crossing lanes between with `_`). Lane `i` is drawn in column `2i`.
//!
//! ```text
//! *   c5 Merge side
//! |\
//! | * c4 side 2
//! | * c3 side 1
//! * | c2 main
//! |/
//! * c1 root
//! ```

use rnt_store::Address;

/// One line of the drawing: the graph's characters, and the index (in the order given) of
/// the commit the line shows, if it shows one.
pub struct GraphLine {
    /// The lanes' characters, padded so the text after them lines up for a commit line,
    /// without trailing blanks for the others.
    pub graph: String,
    /// The commit shown on this line.
    pub commit: Option<usize>,
}

/// The lines of the graph of `commits` (each id with its parents), given children before
/// parents.
pub fn draw(commits: &[(Address, Vec<Address>)]) -> Vec<GraphLine> {
    let mut lanes: Vec<Address> = Vec::new();
    let mut lines = Vec::new();
    for (index, (id, parents)) in commits.iter().enumerate() {
        let column = match lanes.iter().position(|lane| lane == id) {
            Some(column) => column,
            None => {
                lanes.push(*id);
                lanes.len() - 1
            }
        };
        let mut row: Vec<u8> = lane_row(lanes.len());
        row[2 * column] = b'*';
        // The row's text starts past the widest of this row and the merge row below it.
        let opened = parents.len().saturating_sub(1);
        let width = 2 * (lanes.len() + opened) - 1;
        let mut graph = text(&row);
        graph.extend(std::iter::repeat_n(' ', width + 1 - graph.len()));
        lines.push(GraphLine {
            graph,
            commit: Some(index),
        });
        match parents.split_first() {
            None => {
                lanes.remove(column);
                if column < lanes.len() {
                    lines.push(closed_row(&lanes, column));
                }
            }
            Some((first, rest)) => {
                lanes[column] = *first;
                if !rest.is_empty() {
                    lines.push(merge_row(lanes.len(), column, rest.len()));
                    for (offset, parent) in rest.iter().enumerate() {
                        lanes.insert(column + 1 + offset, *parent);
                    }
                }
            }
        }
        while let Some((keep, join)) = first_repeat(&lanes) {
            lines.push(join_row(lanes.len(), keep, join));
            lanes.remove(join);
        }
    }
    lines
}

/// `| | |`: one `|` per lane.
fn lane_row(lanes: usize) -> Vec<u8> {
    let mut row = vec![b' '; (2 * lanes).saturating_sub(1)];
    for lane in 0..lanes {
        row[2 * lane] = b'|';
    }
    row
}

fn text(row: &[u8]) -> String {
    String::from_utf8_lossy(row).trim_end().to_string()
}

fn connector(row: &[u8]) -> GraphLine {
    GraphLine {
        graph: text(row),
        commit: None,
    }
}

/// A merge at lane `column` of `lanes` opening `opened` lanes right after it: `|\`, the
/// lanes right of it moving right (`\`).
fn merge_row(lanes: usize, column: usize, opened: usize) -> GraphLine {
    let mut row = vec![b' '; 2 * (lanes + opened)];
    for lane in 0..=column {
        row[2 * lane] = b'|';
    }
    for step in 0..opened {
        row[2 * (column + step) + 1] = b'\\';
    }
    for lane in column + 1..lanes {
        row[2 * lane + 1] = b'\\';
    }
    connector(&row)
}

/// Lane `join` meeting lane `keep` (left of it): `/` into it, `_` across the lanes between,
/// and the lanes right of `join` moving left (`/`).
fn join_row(lanes: usize, keep: usize, join: usize) -> GraphLine {
    debug_assert!(keep < join, "a lane joins one on its left");
    let mut row = lane_row(lanes);
    row[2 * join] = b' ';
    for lane in keep..join - 1 {
        row[2 * lane + 1] = b'_';
    }
    row[2 * join - 1] = b'/';
    for lane in join + 1..lanes {
        row[2 * lane] = b' ';
        row[2 * lane - 1] = b'/';
    }
    connector(&row)
}

/// A root commit's lane `column` closed: the lanes right of it (now from `column` on)
/// moving left.
fn closed_row(lanes: &[Address], column: usize) -> GraphLine {
    let mut row = lane_row(lanes.len() + 1);
    for lane in column..lanes.len() {
        row[2 * (lane + 1)] = b' ';
        row[2 * lane + 1] = b'/';
    }
    row[2 * column] = b' ';
    connector(&row)
}

/// The first lane (by position) that repeats an earlier one: (the earlier, the repeat).
fn first_repeat(lanes: &[Address]) -> Option<(usize, usize)> {
    (1..lanes.len()).find_map(|join| {
        lanes[..join]
            .iter()
            .position(|lane| *lane == lanes[join])
            .map(|keep| (keep, join))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> Address {
        Address::of(&[n])
    }

    /// The drawing of `history` (commit, parents), children first, each commit line
    /// followed by its number.
    fn drawn(history: &[(u8, &[u8])]) -> String {
        let commits: Vec<(Address, Vec<Address>)> = history
            .iter()
            .map(|(c, ps)| (id(*c), ps.iter().map(|p| id(*p)).collect()))
            .collect();
        draw(&commits)
            .into_iter()
            .map(|line| match line.commit {
                Some(i) => format!("{}{}\n", line.graph, history[i].0),
                None => format!("{}\n", line.graph),
            })
            .collect()
    }

    #[test]
    fn a_merge_opens_a_lane_and_the_lanes_join_at_the_base() {
        let history: &[(u8, &[u8])] = &[(5, &[2, 4]), (4, &[3]), (3, &[1]), (2, &[1]), (1, &[])];
        assert_eq!(drawn(history), "*   5\n|\\\n| * 4\n| * 3\n* | 2\n|/\n* 1\n");
    }

    #[test]
    fn two_tips_and_a_lane_that_crosses_another() {
        // Tips 6 and 5; 5 merges 3 (whose line 6 also reaches) into 4.
        let history: &[(u8, &[u8])] = &[
            (6, &[3]),
            (5, &[4, 2]),
            (4, &[1]),
            (3, &[1]),
            (2, &[1]),
            (1, &[]),
        ];
        assert_eq!(
            drawn(history),
            "* 6\n| *   5\n| |\\\n| * | 4\n* | | 3\n|/ /\n| * 2\n|/\n* 1\n"
        );
    }

    #[test]
    fn a_lane_joins_across_another_with_underscores() {
        let history: &[(u8, &[u8])] = &[(5, &[1]), (4, &[2]), (3, &[1]), (2, &[1]), (1, &[])];
        assert_eq!(
            drawn(history),
            "* 5\n| * 4\n| | * 3\n|_|/\n| * 2\n|/\n* 1\n"
        );
    }

    #[test]
    fn a_root_in_the_middle_closes_its_lane() {
        let history: &[(u8, &[u8])] = &[(3, &[1, 2]), (2, &[]), (1, &[])];
        assert_eq!(drawn(history), "*   3\n|\\\n| * 2\n* 1\n");
    }
}
