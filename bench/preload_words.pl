# bench/preload_words.pl: preload.py's perl workload: a hash of 200,000
# words with arrays of positions, sorted and joined (many small strings,
# arrays and hash entries, all from malloc in Debian's perl).
my %h;
for my $i (1 .. 200000) {
    my $w = sprintf("w%x-%d", ($i * 2654435761) % 1000003, $i % 17);
    push @{ $h{$w} }, $i, length($w);
}
my @k = sort { $h{$a}[0] <=> $h{$b}[0] } keys %h;
my $s = join(",", map { "$_=" . join(":", @{ $h{$_} }) } @k);
print length($s), "\n";
