/**
 * The few protobuf wire-format writes an event file needs: varints, 64-bit doubles, 32-bit
 * floats and length-delimited fields (strings, bytes, nested messages). Fields are written in
 * the order given; a reader accepts any order.
 */
export class ProtoWriter {
  private readonly parts: number[] = [];

  private varint(value: number | bigint): void {
    // Keys, lengths and steps are small non-negative integers: no BigInt for them.
    if (typeof value === "number" && value >= 0 && value <= 0x7fffffff && Number.isInteger(value)) {
      let n = value;
      while (n >= 0x80) {
        this.parts.push((n & 0x7f) | 0x80);
        n >>>= 7;
      }
      this.parts.push(n);
      return;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.parts.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.parts.push(Number(v));
  }

  private key(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** int32, int64, uint64, bool and enum fields (negative numbers take ten bytes, as protobuf says). */
  int(field: number, value: number | bigint | boolean): this {
    this.key(field, 0);
    this.varint(typeof value === "boolean" ? Number(value) : value);
    return this;
  }

  double(field: number, value: number): this {
    this.key(field, 1);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, value, true);
    this.parts.push(...b);
    return this;
  }

  float(field: number, value: number): this {
    this.key(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.parts.push(...b);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.key(field, 2);
    this.varint(value.length);
    for (let i = 0; i < value.length; i++) this.parts.push(value[i]);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}
