#!/bin/sh
# Prints the module graph of a crate (the NIF's, native/src, by default;
# the analyser's, analyze/src) from its imports and fails on any cycle or
# import that points up.
#
#   scripts/module-graph.sh [SRC_DIR]
#
# A module's edges are the modules it names through `crate::` and
# `super::` paths (in `use` lines and in code), and a folder module's own
# submodules (`mod x;`). The graph is printed twice: between the top-level
# modules (`format::walk` counts as `format`), and in full. Each line is
# `level module -> the modules it uses`, level 0 using none and every
# other one above all it uses, lowest first: imports point down. The
# script fails (exit 1), naming the modules, when a module reaches itself
# in either graph, when a module imports from lib.rs, the crate's top, or
# when lib.rs names its layers (below) and a module imports from a layer
# above its own.
# The code build.rs generates is not read: each generated file names only
# items of the module that includes it.
set -eu
cd "$(dirname "$0")/.."
SRC=${1:-native/src}
[ -f "$SRC/lib.rs" ] || { echo "$0: no $SRC/lib.rs" >&2; exit 2; }
find "$SRC" -name '*.rs' ! -path "$SRC/lib.rs" | sort | perl -e '
use strict;
use warnings;
my $src = shift;
my (%file_of, %edges);
while (my $path = <STDIN>) {
    chomp $path;
    (my $name = substr($path, length($src) + 1)) =~ s/\.rs$//;
    $name =~ s{/mod$}{};
    $name =~ s{/}{::}g;
    $file_of{$name} = $path;
}
my %known = map { $_ => 1 } keys %file_of;
my $bad = 0;

# The longest known module that `@segments` starts with; "lib" when none
# (an item of lib.rs).
sub resolve {
    my @segments = @_;
    while (@segments) {
        my $name = join "::", @segments;
        return $name if $known{$name};
        pop @segments;
    }
    return "lib";
}

# The items of a brace group, each with its own nested group flattened.
sub items {
    my ($group) = @_;
    my (@items, $depth, $item);
    ($depth, $item) = (0, "");
    for my $c (split //, $group) {
        if ($c eq "," && $depth == 0) { push @items, $item; $item = ""; next }
        $depth++ if $c eq "{";
        $depth-- if $c eq "}";
        $item .= $c;
    }
    push @items, $item;
    my @paths;
    for my $it (@items) {
        $it =~ s/\s+//g;
        next if $it eq "" || $it eq "self" || $it eq "*";
        if ($it =~ /^([a-z_][a-z0-9_:]*?)::\{(.*)\}$/) {
            my $prefix = $1;
            push @paths, $prefix, map { "${prefix}::$_" } items($2);
        } else {
            $it =~ s/\s+as\s+.*//;
            push @paths, $it;
        }
    }
    return @paths;
}

for my $name (sort keys %file_of) {
    open my $fh, "<", $file_of{$name} or die "$file_of{$name}: $!";
    my $text = do { local $/; <$fh> };
    close $fh;
    $text =~ s{//[^\n]*}{}g;          # comments, doc comments included
    $text =~ s{"(?:\\.|[^"\\])*"}{""}g; # strings
    # The extents of inline modules (`mod tests { ... }`), inside which
    # `super::` names the file'"'"'s own module.
    my @inline;
    while ($text =~ /\bmod\s+[a-z_][a-z0-9_]*\s*\{/g) {
        my ($start, $depth, $end) = (pos($text), 1, pos($text));
        while ($depth > 0 && $end < length $text) {
            my $c = substr($text, $end++, 1);
            $depth++ if $c eq "{";
            $depth-- if $c eq "}";
        }
        push @inline, [$start, $end];
    }
    my %deps;
    # Folder modules: their submodules.
    while ($text =~ /\bmod\s+([a-z_][a-z0-9_]*)\s*;/g) {
        my $child = "${name}::$1";
        $deps{$child} = 1 if $known{$child};
    }
    while ($text =~ /\b(crate|(?:super::)+)((?:::)?[a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)?(::\{)?/g) {
        my ($root, $path, $brace) = ($1, $2 // "", $3);
        my $at = $-[0];
        $path =~ s/^:://;
        my @base;
        if ($root eq "crate") {
            @base = ();
        } else {
            my $ups = () = $root =~ /super::/g;
            $ups -= grep { $_->[0] <= $at && $at < $_->[1] } @inline;
            my @here = split /::/, $name;
            @base = @here[0 .. $#here - $ups];
        }
        my @paths = ($path);
        if ($brace) {
            my $start = pos($text);
            my ($depth, $end) = (1, $start);
            while ($depth > 0 && $end < length $text) {
                my $c = substr($text, $end++, 1);
                $depth++ if $c eq "{";
                $depth-- if $c eq "}";
            }
            my $group = substr($text, $start, $end - $start - 1);
            push @paths, map { $path eq "" ? $_ : "${path}::$_" } items($group);
            pos($text) = $end;
        }
        for my $p (@paths) {
            my @segments = (@base, grep { $_ ne "" } split /::/, $p);
            next unless @segments;
            my $dep = resolve(@segments);
            next if $dep eq $name;
            # A module naming its own submodule through `crate::` is the
            # folder using its parts: an edge down.
            $deps{$dep} = 1;
        }
    }
    $edges{$name} = \%deps;
}

for my $name (sort keys %edges) {
    if ($edges{$name}{lib}) {
        print STDERR "module-graph: $name imports from lib.rs, the top of the crate\n";
        $bad = 1;
        delete $edges{$name}{lib};
    }
}

sub top { (split /::/, $_[0])[0] }

# Layers: a line `// module-graph layers: a b c` in lib.rs names the
# top-level modules from the bottom up; a module may then import only from
# its own layer and those below (main.rs, the binary, sits above them all).
# Without the line, levels alone order the modules.
open my $lib, "<", "$src/lib.rs" or die "$src/lib.rs: $!";
my @layers;
while (<$lib>) { @layers = split " ", $1 if m{^\s*//\s*module-graph layers:\s*(.*)$} }
close $lib;
if (@layers) {
    my %rank;
    @rank{@layers} = 0 .. $#layers;
    $rank{main} = @layers;
    for my $name (sort keys %edges) {
        my $layer = top($name);
        unless (defined $rank{$layer}) {
            print STDERR "module-graph: $name is in no layer of lib.rs ($src/lib.rs: module-graph layers: @layers)\n";
            $bad = 1;
            next;
        }
        for my $dep (sort keys %{ $edges{$name} }) {
            my $to = top($dep);
            next unless defined $rank{$to} && $rank{$to} > $rank{$layer};
            print STDERR "module-graph: $name imports $dep, from the layer $to above its own ($layer); layers, lowest first: @layers\n";
            $bad = 1;
        }
    }
}

my %top;
for my $name (keys %edges) {
    $top{top($name)} //= {};
    for my $dep (keys %{ $edges{$name} }) {
        $top{top($name)}{top($dep)} = 1 unless top($dep) eq top($name);
    }
}

# Levels by depth-first search; a module met again while on the path is a
# cycle, printed as the path from it.
sub levels {
    my ($graph, $what) = @_;
    my (%level, %on_path, @path, $cycles);
    $cycles = 0;
    my $visit;
    $visit = sub {
        my ($m) = @_;
        return $level{$m} if defined $level{$m};
        if ($on_path{$m}) {
            my @loop = @path;
            shift @loop while @loop && $loop[0] ne $m;
            print STDERR "module-graph: a cycle among $what: ",
                join(" -> ", @loop, $m), "\n";
            $cycles++;
            return 0;
        }
        $on_path{$m} = 1;
        push @path, $m;
        my $l = 0;
        for my $d (sort keys %{ $graph->{$m} // {} }) {
            my $dl = $visit->($d) + 1;
            $l = $dl if $dl > $l;
        }
        pop @path;
        delete $on_path{$m};
        return $level{$m} = $l;
    };
    $visit->($_) for sort keys %$graph;
    return (\%level, $cycles);
}

sub show {
    my ($graph, $title, $what) = @_;
    my ($level, $cycles) = levels($graph, $what);
    print "$title\n";
    for my $m (sort { $level->{$a} <=> $level->{$b} || $a cmp $b } keys %$graph) {
        my @deps = sort keys %{ $graph->{$m} };
        printf "  %2d %s%s\n", $level->{$m}, $m, @deps ? " -> " . join(" ", @deps) : "";
    }
    return $cycles;
}

my $cycles = show(\%top, "Top-level modules of $src (level, module -> what it uses):", "the top-level modules");
print "\n";
$cycles += show(\%edges, "All modules:", "the modules");
if ($cycles || $bad) {
    print STDERR "module-graph: imports must point down: fix the modules named above\n";
    exit 1;
}
print "\nNo cycle; nothing imports from lib.rs", (@layers ? " or from a layer above its own" : ""), ".\n";
' "$SRC"
