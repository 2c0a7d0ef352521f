# work.pl - what test_real_programs.py runs in perl: hashes, regular
# expressions, sorting and string building, then a digest on stdout.
use strict;
use warnings;

my %h;
for my $i (1 .. 50000) {
    my $k = sprintf("key%05d", ($i * 7919) % 10007);
    push @{ $h{$k} }, $i;
}
my $text = join(" ", map { "$_=" . scalar(@{ $h{$_} }) } sort keys %h);
my @words = ($text =~ /(key\d+)=(\d+)/g);
my %count;
$count{$_}++ for grep { /^\d+$/ } @words;
my @big = sort { length($a) <=> length($b) or $a cmp $b } map { "x" x ($_ % 17) . $_ } 1 .. 30000;
my $sum = 0;
$sum += ord($_) for split //, substr($text, 0, 20000);
print scalar(keys %h), " ", scalar(@words), " ", join(",", map { "$_:$count{$_}" } sort keys %count),
    " $sum $big[-1]\n";
