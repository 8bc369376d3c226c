//! The ground floor: the one module that knows what a term's word is and
//! how the VM lays out the objects this library reads in place (small
//! maps, binaries), and the enif calls that read the rest. Nothing else
//! in the library reads a term's memory.
//!
//! Each layout read in place is checked at load against objects the VM
//! itself made (`init`); where a release lays one out otherwise, the
//! readers answer `None` and callers go through enif: slower, never
//! wrong.

pub mod big;
pub mod binary;
pub mod enif;
pub mod fun;
pub mod map;
pub mod reference;
pub mod term;
pub mod word;

pub use word::{
    is_atom_word, is_immediate, is_local_pid, is_nil, small_int, term_of_word, term_word,
};

use rustler::{Env, Term};

/// What the load learned: which layouts are read in place.
pub struct Layouts {
    pub containers: bool,
    pub maps: bool,
    pub binaries: bool,
    pub references: bool,
    pub bitstrings: bool,
    pub bignums: bool,
    pub external_funs: bool,
    pub local_funs: bool,
}

/// Learns the words and layouts of this release from terms the VM makes
/// and from `samples` (the module's: references and aliases), and the
/// order enif iterates a hash map in from `hash_map` and the first key
/// `maps:to_list/1` gives for it. Called from the NIF's load.
pub fn init(env: Env, hash_map: Term, to_list_first: Term, samples: &[Term]) -> Layouts {
    word::init(env);
    map::learn_iteration_order(
        env.as_c_arg(),
        hash_map.as_c_arg(),
        to_list_first.as_c_arg(),
    );
    let samples: Vec<_> = samples.iter().map(|t| t.as_c_arg()).collect();
    let funs = fun::init(env.as_c_arg());
    let layouts = Layouts {
        containers: term::init(env.as_c_arg()),
        maps: map::init(env),
        binaries: binary::init(env.as_c_arg()),
        references: reference::init(env.as_c_arg(), &samples),
        bitstrings: binary::reads_bits(),
        bignums: big::init(env.as_c_arg()),
        external_funs: funs.external,
        local_funs: funs.local,
    };
    term::learn_classes();
    layouts
}
