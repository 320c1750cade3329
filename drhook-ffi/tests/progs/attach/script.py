# An unmodified Python script: two threads, then a child process.
import subprocess
import sys
import threading


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


threads = [threading.Thread(target=work, args=(300000,)) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
out = subprocess.run(["sh", "-c", "echo child"], capture_output=True, text=True)
print("python done", out.stdout.strip())
sys.exit(4)
