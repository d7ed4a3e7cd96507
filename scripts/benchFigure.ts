export interface BenchFigure {
  name: string;
  figure: number;
  unit: string;
  target: string;
  pass: boolean;
}
