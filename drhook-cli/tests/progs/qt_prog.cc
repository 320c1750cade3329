// A QtCore program for the `drhook wrap -x c++` test (the seed's own
// example library): QString, QList and QFile. Writes <n> lines to a file,
// reads them back into a QList<QString>, and prints a summary.
//
//   qt_prog <n> <file>
#include <drhook.h>

#include <QtCore/QFile>
#include <QtCore/QList>
#include <QtCore/QString>

#include <cstdio>
#include <cstdlib>

static void write_lines(const QString &path, int n) {
  DRHOOK_START(write_lines);
  QFile f(path);
  if (f.open(QIODevice::WriteOnly | QIODevice::Text)) {
    for (int i = 0; i < n; i++) {
      QString line = QString::number(i) + QString::fromUtf8(" line\n");
      f.write(line.toUtf8());
    }
    f.close();
  }
  DRHOOK_END(0);
}

static QList<QString> read_lines(const QString &path) {
  QList<QString> out;
  DRHOOK_START(read_lines);
  QFile f(path);
  if (f.open(QIODevice::ReadOnly | QIODevice::Text)) {
    while (!f.atEnd()) out.append(QString::fromUtf8(f.readLine()).trimmed());
    f.close();
  }
  DRHOOK_END(0);
  return out;
}

int main(int argc, char **argv) {
  DRHOOK_START(main);
  int n = argc > 1 ? std::atoi(argv[1]) : 3;
  QString path = QString::fromLocal8Bit(argc > 2 ? argv[2] : "qt.txt");
  write_lines(path, n);
  QList<QString> lines = read_lines(path);
  int upper = 0;
  for (const QString &l : lines) upper += l.toUpper().size();
  std::printf("%d lines, %d characters, last \"%s\"\n", (int)lines.size(), upper,
              lines.isEmpty() ? "" : lines.last().toUtf8().constData());
  DRHOOK_END(0);
  return 0;
}
