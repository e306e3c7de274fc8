// placeholder translation unit for a library whose sources have not landed yet
typedef int cusp_empty_translation_unit;
