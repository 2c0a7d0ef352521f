// Work.java - test_real_programs.py's java case, run as a single source
// file (the launcher compiles it in memory): a map of lists filled from
// two threads; prints its size and a checksum.  The JVM's compiler
// threads allocate through malloc all along.
import java.util.*;
import java.util.concurrent.*;

public class Work {
  public static void main(String[] args) throws Exception {
    Map<String, List<Integer>> m = new ConcurrentHashMap<>();
    Thread[] ts = new Thread[2];
    for (int t = 0; t < 2; t++) {
      final int base = t;
      ts[t] = new Thread(() -> {
        for (int i = base; i < 200000; i += 2)
          m.computeIfAbsent("k" + (i % 5000), k -> Collections.synchronizedList(new ArrayList<>())).add(i);
      });
      ts[t].start();
    }
    for (Thread t : ts) t.join();
    long sum = 0;
    for (List<Integer> l : m.values()) for (int v : l) sum += v;
    System.out.println(m.size() + " " + sum);
  }
}
